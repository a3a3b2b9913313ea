-- wrk -s bench/miss-urls.lua URL -- PREFIX [COOKIE]: every request a new URL (URL's path and
-- query, then PREFIX, then a counter), so that every request through a cache is a miss. PREFIX
-- makes the URLs of one wrk run unlike those of every other run; with -t1 the counter is unique,
-- and with more threads each thread's PREFIX from the second on carries its number ("t2").
local prefix = ""
local n = 0
local threads = 0

-- Runs in wrk's main state once per thread; `id` becomes a global of that thread's own state.
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  prefix = args[1] or tostring(os.time())
  if id and id > 1 then prefix = prefix .. "t" .. id end
  if args[2] then wrk.headers["Cookie"] = args[2] end
end

function request()
  n = n + 1
  return wrk.format(nil, wrk.path .. prefix .. "-" .. n)
end
