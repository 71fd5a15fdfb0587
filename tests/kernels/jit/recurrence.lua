-- A float loop LuaJIT interprets, then compiles into machine code (a trace)
-- once it is hot, in region "loop".
--
--   usage: luajit recurrence.lua LIBMARKS N
--
-- s = s * a + b, N times: exactly N MULSD (interpreted or compiled). The
-- adds are N plus the loop counter's, which LuaJIT's interpreter keeps as
-- a double (one ADDSD per interpreted iteration) and the trace as an
-- integer: N add FLOP and more, as many as iterations were interpreted.
local ffi = require("ffi")
ffi.cdef([[
void marks_begin(const char *name);
void marks_end(const char *name);
]])
local marks = ffi.load(arg[1])
local n = tonumber(arg[2])
local a, b = tonumber("0.5"), tonumber("1.0")

marks.marks_begin("loop")
local s = 0.0
for _ = 1, n do
  s = s * a + b
end
marks.marks_end("loop")
print(s)
