/* flopscope's region markers as the JNI methods of Recurrence.java.
 *
 *   build: gcc -shared -fPIC -O2 -I crates/markers/include
 *          -I $JAVA_HOME/include -I $JAVA_HOME/include/linux -o libjnimarks.so jni_marks.c
 */
#include <jni.h>
#include "flopscope.h"

JNIEXPORT void JNICALL Java_Recurrence_begin(JNIEnv *env, jclass cls, jstring name) {
    (void)cls;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    flopscope_region_begin(s);
    (*env)->ReleaseStringUTFChars(env, name, s);
}

JNIEXPORT void JNICALL Java_Recurrence_end(JNIEnv *env, jclass cls, jstring name) {
    (void)cls;
    const char *s = (*env)->GetStringUTFChars(env, name, NULL);
    flopscope_region_end(s);
    (*env)->ReleaseStringUTFChars(env, name, s);
}
