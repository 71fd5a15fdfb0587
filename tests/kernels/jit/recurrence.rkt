#lang racket/base
;; A float loop Racket (Chez Scheme underneath) compiles to machine code
;; in pages of its heap, beside data it reads files into, in region "loop".
;;
;;   usage: racket recurrence.rkt LIBMARKS N
;;
;; s = s * a + b, N times on flonums: N MULSD and N ADDSD, nothing else.
(require ffi/unsafe racket/flonum)

(define args (current-command-line-arguments))
(define marks (ffi-lib (vector-ref args 0)))
(define begin-region (get-ffi-obj "marks_begin" marks (_fun _string -> _void)))
(define end-region (get-ffi-obj "marks_end" marks (_fun _string -> _void)))
(define n (string->number (vector-ref args 1)))
(define a (exact->inexact (string->number "1/2")))
(define b (exact->inexact (string->number "1")))

(define (recur s i)
  (if (eqv? i 0) s (recur (fl+ (fl* s a) b) (- i 1))))

(begin-region "loop")
(define s (recur 0.0 n))
(end-region "loop")
(displayln s)
