#!/bin/sh
# Runs the scale kernel twice: FLOP = $2 + $3 (the shell itself does none).
"$1" "$2"
"$1" "$3"
