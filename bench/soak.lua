-- wrk script for bench/soak.mjs: a mixed load at a bounded rate. Every request is tagged with its
-- kind in X-Request-Id ("hit-1-42"), which the gateway returns on every answer of its own and of
-- the wiki, so each status is counted per kind (PURGE answers carry no id: they are recognised by
-- their {"purged":…} body). done() prints one line: SOAK_COUNTS {"sent":{kind:n},"got":{"kind status":n}}.
--
--   wrk … -s soak.lua URL -- DELAY_MS [misscookie]
--     DELAY_MS     each connection waits 0..2×DELAY_MS between requests
--     misscookie   the misses carry an unrelated cookie (a diagnostic: see soak.mjs)
--
-- Kinds, per 1000 requests (what each should get is in soak-verdict.mjs):
--   hit 760       anonymous cacheable reads over 1000 keys, Zipf(s≈1): mostly hits
--   miss 80       a unique URL each time: fetched, stored, later evicted (small byte budget)
--   session 80    logged-in reads with session cookies (per-session tier); sessions come and go
--   post 20       anonymous POST: pass
--   logout 5      a session's POST action=logout: pass, and the session's entries are evicted
--   page 20       index.php: streamed through
--   apierror 10   an unknown action: MediaWiki-API-Error, never stored
--   malformed 10  undecodable api.php / other paths: the gateway's 400
--   toolong 5     a request target over WIKIEDGE_MAX_URL_BYTES: 414
--   purge 10      PURGE of a hot key from loopback (trusted): 200
local KINDS = {
  { "hit", 760 }, { "miss", 80 }, { "session", 80 }, { "post", 20 }, { "logout", 5 },
  { "page", 20 }, { "apierror", 10 }, { "malformed", 10 }, { "toolong", 5 }, { "purge", 10 },
}
local N = 1000

local threads = {}
setup = function(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

local delay_ms, miss_cookie, seq, session_base, session_seq = 10, false, 0, 0, 0
sent, got = {}, {}

init = function(args)
  delay_ms = tonumber(args[1]) or delay_ms
  miss_cookie = args[2] == "misscookie"
  math.randomseed(os.time() + (tid or 0))
end

delay = function()
  return math.random(0, 2 * delay_ms)
end

-- Zipf(s=1) over 1..N, continuous approximation: N^U has density ∝ 1/x.
local function zipf()
  return math.min(N, math.floor(N ^ math.random()))
end

local function hot_path(i)
  return "/w/api.php?action=query&list=allpages&format=json&aplimit=" .. (1 + i % 50)
    .. "&apfrom=" .. string.char(65 + math.floor((i - 1) / 50) % 26)
end

-- 64 sessions live at a time; a new one replaces the oldest every 20 session requests, so the
-- per-session tier sees sessions start and be abandoned all through the run.
local function session_cookie()
  session_seq = session_seq + 1
  if session_seq % 20 == 0 then session_base = session_base + 1 end
  local s = session_base + math.random(0, 63)
  return string.format("wiki_session=soak%02d%026d; wikiUserName=Soak%d; wikiUserID=%d", tid or 0, s, s, s)
end

local SESSION_QUERIES = {
  "action=query&meta=userinfo&uiprop=groups&format=json",
  "action=query&meta=siteinfo&format=json&maxage=60&smaxage=60",
  "action=query&list=allpages&format=json&aplimit=5",
  "action=query&list=filearchive&format=json",
}
local LONG = string.rep("x", 9000)
local FORM = { ["Content-Type"] = "application/x-www-form-urlencoded" }

local function build(kind, id)
  local h = { ["X-Request-Id"] = id }
  if kind == "hit" then return wrk.format("GET", hot_path(zipf()), h) end
  if kind == "miss" then
    if miss_cookie then h["Cookie"] = "soakprefs=1" end
    return wrk.format("GET", "/w/api.php?action=query&list=allpages&format=json&aplimit=30&apfrom=Soak" .. id, h)
  end
  if kind == "session" then
    h["Cookie"] = session_cookie()
    return wrk.format("GET", "/w/api.php?" .. SESSION_QUERIES[math.random(#SESSION_QUERIES)], h)
  end
  if kind == "post" or kind == "logout" then
    for k, v in pairs(FORM) do h[k] = v end
    local body = "action=query&meta=siteinfo&format=json"
    if kind == "logout" then
      h["Cookie"] = session_cookie()
      body = "action=logout&format=json&token=%2B%5C"
    end
    return wrk.format("POST", "/w/api.php", h, body)
  end
  if kind == "page" then return wrk.format("GET", "/w/index.php?title=Page_" .. zipf(), h) end
  if kind == "apierror" then return wrk.format("GET", "/w/api.php?action=nosuch&format=json&n=" .. zipf(), h) end
  if kind == "malformed" then
    return wrk.format("GET", (seq % 2 == 0) and "/w/api.php/%zz" or "/w/%E0%A4%A/x", h)
  end
  if kind == "toolong" then return wrk.format("GET", "/w/api.php?action=query&format=json&q=" .. LONG, h) end
  return wrk.format("PURGE", hot_path(zipf()), h)
end

request = function()
  seq = seq + 1
  local r, kind = math.random(1000), nil
  for _, k in ipairs(KINDS) do
    if r <= k[2] then kind = k[1] break end
    r = r - k[2]
  end
  sent[kind] = (sent[kind] or 0) + 1
  return build(kind, kind .. "-" .. (tid or 0) .. "-" .. seq)
end

response = function(status, headers, body)
  local id = headers["x-request-id"] or headers["X-Request-Id"]
  local kind = id and id:match("^(%a+)%-")
  if not kind then
    kind = (body and body:find('^{"purged":')) and "purge" or "untagged"
  end
  local key = kind .. " " .. status
  got[key] = (got[key] or 0) + 1
end

local function merge(into, from)
  for k, v in pairs(from or {}) do into[k] = (into[k] or 0) + v end
end

local function json(t)
  local parts = {}
  for k, v in pairs(t) do parts[#parts + 1] = string.format("%q:%d", k, v) end
  return "{" .. table.concat(parts, ",") .. "}"
end

done = function(summary, latency, requests)
  local all_sent, all_got = {}, {}
  for _, t in ipairs(threads) do
    merge(all_sent, t:get("sent"))
    merge(all_got, t:get("got"))
  end
  io.write("SOAK_COUNTS {\"sent\":" .. json(all_sent) .. ",\"got\":" .. json(all_got) .. "}\n")
end
