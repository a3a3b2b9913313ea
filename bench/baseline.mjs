// BENCH_BASELINE=<git ref>: the gateway as built from another commit, run beside this tree's in
// the same interleaved rounds (the hit and miss-throughput sections), so that "no regression" is
// read from one run, not from two runs on a host whose speed moves between them. The ref is
// checked out into a temporary git worktree, `npm ci` and `npm run build` run there, and the
// worktree is removed when the bench ends, on an error or a Ctrl-C too.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { root } from './harness.mjs';

let made;

/** Removes the worktree made for the baseline, if any (synchronously: it runs on exit). */
function removeWorktree() {
  if (!made) return;
  const dir = made;
  made = undefined;
  try {
    execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: root, stdio: 'ignore' });
  } catch {
    /* already gone */
  }
  rmSync(path.dirname(dir), { recursive: true, force: true });
  try {
    execFileSync('git', ['worktree', 'prune'], { cwd: root, stdio: 'ignore' });
  } catch {
    /* nothing to prune */
  }
}
process.on('exit', removeWorktree);

/**
 * The baseline build of `ref`: `{ main, label }`, `main` its dist/main.js, `label` the ref and its
 * short commit; undefined without a ref.
 */
export function prepareBaseline(ref = process.env.BENCH_BASELINE) {
  if (!ref) return undefined;
  const commit = execFileSync('git', ['rev-parse', '--short', `${ref}^{commit}`], { cwd: root, encoding: 'utf8' }).trim();
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'wikiedge-baseline-')), 'tree');
  console.log(`\n# baseline ${ref} (${commit}): git worktree add ${dir}; npm ci; npm run build`);
  execFileSync('git', ['worktree', 'add', '--detach', dir, commit], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  made = dir;
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  const main = path.join(dir, 'dist/main.js');
  if (!existsSync(main)) throw new Error(`the build of ${ref} made no dist/main.js`);
  return { main, label: `${ref === commit ? '' : `${ref} `}${commit}`, remove: removeWorktree };
}
