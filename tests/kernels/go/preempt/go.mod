module preempt

go 1.19
