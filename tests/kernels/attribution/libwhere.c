/* The shared-library part of where.c: scale() multiplies n values by f,
 * n FLOP (n multiplies) per call.
 *
 *   build: -O2 -g -shared -fPIC -o libwhere.so libwhere.c
 */
void scale(double *a, int n, double f) {
    for (int i = 0; i < n; i++) { /* LOOP scale */
        a[i] *= f;
    }
}
