// What the benches read of processes from /proc: the CPU time of a process tree (nginx and
// Varnish fork; a Node process has threads), and signals to a whole tree.
import { readFileSync, readdirSync } from 'node:fs';

/** CPU seconds (user + system) used so far by `pid` and its descendants (nginx and Varnish fork). */
export function treeCpuSeconds(pid) {
  const stats = procStats();
  const tree = treeOf(pid, stats);
  return stats.filter((st) => tree.has(st.pid)).reduce((sum, st) => sum + st.cpu, 0);
}

/** Minor page faults so far of `pid` and its descendants: pages the kernel had to map (and zero) for them. */
export function treePageFaults(pid) {
  const stats = procStats();
  const tree = treeOf(pid, stats);
  return stats.filter((st) => tree.has(st.pid)).reduce((sum, st) => sum + st.minflt, 0);
}

/** Sends `signal` to `pid` and every process under it. */
export function signalTree(pid, signal) {
  for (const member of treeOf(pid, procStats())) {
    try {
      process.kill(member, signal);
    } catch {
      /* gone */
    }
  }
}

/** Every process's pid, parent and CPU seconds, from /proc. */
function procStats() {
  const stats = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const st = statOf(`/proc/${entry}/stat`);
    if (st) stats.push({ pid: Number(entry), ...st });
  }
  return stats;
}

/** `pid` and every process under it. */
function treeOf(pid, stats) {
  const tree = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const st of stats) if (!tree.has(st.pid) && tree.has(st.ppid)) (tree.add(st.pid), (grew = true));
  }
  return tree;
}

/**
 * A /proc stat file's parent, CPU seconds (user + system, USER_HZ 100) and minor page faults
 * (proc(5): fields 4, 14, 15 and 10); undefined when gone.
 */
function statOf(file) {
  try {
    const stat = readFileSync(file, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), cpu: (Number(fields[11]) + Number(fields[12])) / 100, minflt: Number(fields[7]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) of this process's children that have ended and been waited for
 * (proc(5) /proc/self/stat cutime and cstime, fields 16 and 17): read before and after an
 * execFileSync of wrk, the CPU that wrk used.
 */
export function reapedChildrenCpuSeconds() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/** CPU seconds of one thread (its /proc task), 0 when it is gone. */
export function threadCpuSeconds(pid, tid) {
  return statOf(`/proc/${pid}/task/${tid}/stat`)?.cpu ?? 0;
}

/** The median of `xs` (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
