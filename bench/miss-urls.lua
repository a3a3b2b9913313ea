-- wrk -s bench/miss-urls.lua URL -- PREFIX [COOKIE]: every request a new URL (URL's path and
-- query, then PREFIX, then a counter), so that every request through a cache is a miss. PREFIX
-- makes the URLs of one wrk run unlike those of every other run; with -t1 the counter is unique.
local prefix = ""
local n = 0

function init(args)
  prefix = args[1] or tostring(os.time())
  if args[2] then wrk.headers["Cookie"] = args[2] end
end

function request()
  n = n + 1
  return wrk.format(nil, wrk.path .. prefix .. "-" .. n)
end
