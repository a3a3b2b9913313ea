-- wrk script: requests drawn from a Zipf(s=1) distribution over N distinct api.php URLs.
local N = 1000
local cdf = {}
local total = 0
for i = 1, N do total = total + 1 / i; cdf[i] = total end
for i = 1, N do cdf[i] = cdf[i] / total end
local paths = {}
for i = 0, N - 1 do
  local letter = string.char(65 + math.floor(i / 50))
  paths[i + 1] = "/w/api.php?action=query&list=allpages&format=json&aplimit=" .. (1 + i % 50) .. "&apfrom=" .. letter
end
math.randomseed(42)
request = function()
  local r = math.random()
  local lo, hi = 1, N
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if cdf[mid] < r then lo = mid + 1 else hi = mid end
  end
  return wrk.format("GET", paths[lo])
end
