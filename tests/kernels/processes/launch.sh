#!/bin/sh
# A launcher as users write them: runs SCALE N1, then MARKED N2 (which marks
# region "scale" and exits with CODE), then CRASH N3 (which dies of SIGSEGV
# after 8 N3 FLOP), and exits with EXIT. The shell itself does no FLOP:
# FLOP = N1 + N2 + 8 N3.
# Usage: launch.sh SCALE N1 MARKED N2 CODE CRASH N3 EXIT
"$1" "$2"
"$3" "$4" "$5"
"$6" "$7"
exit "$8"
