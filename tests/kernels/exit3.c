/* Exits with status 3 after no floating-point work.
 *
 *   usage: exit3                build: -O2
 *
 *   exit_status = 3, complete = true, flop.total = 0
 */
int main(void) { return 3; }
