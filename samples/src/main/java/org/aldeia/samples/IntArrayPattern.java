package org.aldeia.samples;

/**
 * The contents of the serialization benchmark's arrays: a value derived from the index and the
 * length, so the receiver can check every element of an array of any size without being told
 * what was sent.
 */
final class IntArrayPattern {

    private IntArrayPattern() {
    }

    static int[] create(int length) {
        int[] array = new int[length];
        for (int i = 0; i < length; i++) {
            array[i] = valueAt(i, length);
        }
        return array;
    }

    /** The first index whose element is not the pattern's, or -1 when the whole array is right. */
    static int firstMismatch(int[] array) {
        for (int i = 0; i < array.length; i++) {
            if (array[i] != valueAt(i, array.length)) {
                return i;
            }
        }
        return -1;
    }

    private static int valueAt(int index, int length) {
        return index * 0x9E3779B1 ^ length;
    }
}
