/* Runs until stopped by a signal: one multiply per iteration, so that an
 * interrupted count has FLOP to keep. Usage: spin */
volatile double x = 1.0;

int main(void) {
    for (;;)
        x = x * 1.0000001;
}
