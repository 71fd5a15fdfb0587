;;; SBCL compiling a float recurrence to machine code as it loads this
;;; script, run in region "loop" (marked through kernels/jit/marks.c).
;;;
;;;   usage: sbcl --script recurrence.lisp LIBMARKS N
;;;
;;; s = s * a + b, N times, in unboxed doubles: exactly N MULSD and N
;;; ADDSD (SBCL neither vectorizes a dependent chain nor contracts it).
(sb-alien:load-shared-object (second sb-ext:*posix-argv*))
(declaim (optimize (speed 3) (safety 0)))
(defun recur (n a b)
  (declare (fixnum n) (double-float a b))
  (let ((s 0d0))
    (declare (double-float s))
    (dotimes (i n) (setf s (+ (* s a) b)))
    s))
(let ((n (parse-integer (third sb-ext:*posix-argv*))))
  (sb-alien:alien-funcall
   (sb-alien:extern-alien "marks_begin" (function sb-alien:void sb-alien:c-string)) "loop")
  (let ((s (recur n 0.5d0 1d0)))
    (sb-alien:alien-funcall
     (sb-alien:extern-alien "marks_end" (function sb-alien:void sb-alien:c-string)) "loop")
    (format t "~a~%" s)))
