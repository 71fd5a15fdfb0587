// A float recurrence V8 (Node.js) interprets, then compiles with TurboFan
// (on-stack replacement of the running loop), then runs again as a
// function that TurboFan compiles, deoptimizes when it sees a new type, and
// compiles again.
//
//   usage: node --predictable --single-threaded recurrence.js N
//
// --predictable makes V8 deterministic (no background compilation, no
// decisions taken by the clock), so that two runs do the same work and the
// engines can be compared exactly; without it V8 compiles on threads
// of its own and tiers up at moments that depend on timing.
//
// x = x * a + b: N times in the loop, then N times through step (JavaScript
// has no fused multiply-add: one MULSD and one ADDSD a step, interpreted or
// compiled). Once, step gets a string for b (the addition becomes string
// concatenation; V8 deoptimizes step and compiles it again later), which
// adds no FLOP beyond the one multiply. So from one N to another the FLOP
// differ by exactly 2 x 2 x (the difference of N): as many multiplies as
// adds.
const n = Number(process.argv[2]);
function step(x, a, b) {
  return x * a + b;
}
// Locals of a function, which compiled code keeps in registers: a
// top-level variable would be a boxed number, allocated anew at every
// step, and the garbage collector's own arithmetic would grow with N.
function run(n) {
  const a = 0.5;
  const b = 1.25;
  let x = 1.5;
  for (let i = 0; i < n; i++) {
    x = x * a + b;
  }
  let y = 3.0;
  for (let i = 0; i < n; i++) {
    y = step(y, a, b);
    if (i === n >> 1) {
      step(y, a, "deopt");
    }
  }
  return [x, y];
}
// The bits, not a decimal rendering (which does floating-point work).
const bits = new BigUint64Array(new Float64Array(run(n)).buffer);
console.log(bits[0].toString(16), bits[1].toString(16));
