// Goroutines in tight loops that only a signal can stop: Go's scheduler
// preempts a goroutine that has run 10 ms while others wait (more
// goroutines than GOMAXPROCS), and its collector stops them all, by
// sending the thread SIGURG; the handler moves the interrupted program
// counter to the runtime's asyncPreempt, which returns there later. The
// loops have no calls, so no other safe point stops them.
//
//	usage: preempt N G A        build: CGO_ENABLED=0 go build
//
// G goroutines take N/G of the N iterations of s += sqrt(i) each (work,
// inlined into its goroutine) while another allocates A blocks of 1 KB,
// so that the collector runs meanwhile (A = 0: none). Nothing else computes a square root, and work
// does nothing else: with the sum of the G parts printed as an integer,
//
//	flop_by_op.sqrt = N; main.work: sqrt = add = N; its loop: G entries,
//	N + G iterations (G divides N; Go enters the loop by a jump to its
//	test, at the bottom, which runs once more than the body each time)
package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
)

func work(lo, hi int) float64 {
	s := 0.0
	for i := lo; i < hi; i++ {
		s += math.Sqrt(float64(i))
	}
	return s
}

var sink [][]byte

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	g, _ := strconv.Atoi(os.Args[2])
	a, _ := strconv.Atoi(os.Args[3])
	var wg sync.WaitGroup
	parts := make([]float64, g)
	for k := 0; k < g; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			parts[k] = work(k*n/g, (k+1)*n/g)
		}(k)
	}
	done := make(chan bool)
	go func() {
		for i := 0; i < a; i++ {
			sink = append(sink, make([]byte, 1024))
			if len(sink) > 1000 {
				sink = nil
			}
		}
		done <- true
	}()
	wg.Wait()
	<-done
	// The parts' integer parts, summed as integers: no floating-point add.
	var total int64
	for _, p := range parts {
		total += int64(p)
	}
	fmt.Println(total)
}
