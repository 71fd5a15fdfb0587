// A float recurrence in Java, marked as a region through JNI (jni_marks.c):
// the JVM's interpreter, or its JIT compilers, run it.
//
//   usage: java -Djava.library.path=DIR -cp DIR Recurrence N
//
// The region "loop" runs x = x * a + b N times: N multiplies and N adds
// (Java does not fuse them: 2 FLOP per iteration, fp64), whether
// interpreted or compiled. The JVM's own floating-point work runs outside
// the region or on other threads (regions are per thread).
//
//   region "loop": flop_by_op.mul = flop_by_op.add = N
public class Recurrence {
    static native void begin(String name);
    static native void end(String name);

    public static void main(String[] args) {
        System.loadLibrary("jnimarks");
        long n = Long.parseLong(args[0]);
        double x = 0.5, a = 0.999, b = 0.001;
        begin("loop");
        for (long i = 0; i < n; i++) {
            x = x * a + b;
        }
        end("loop");
        System.out.println("x bits " + Long.toHexString(Double.doubleToRawLongBits(x)));
    }
}
