package org.aldeia.samples.rmi;

/** The server's remote object (also the bench's RMI phase's); it counts the calls it served so the server knows when to stop. */
public final class ReverserService implements Reverser {

    private int served;

    @Override
    public int[] reverse(int[] values) {
        int[] reversed = new int[values.length];
        for (int i = 0; i < values.length; i++) {
            reversed[values.length - 1 - i] = values[i];
        }
        synchronized (this) {
            served++;
            notifyAll();
        }
        return reversed;
    }

    /** Blocks until {@code calls} calls have entered {@link #reverse}; their replies may still be on their way. */
    synchronized void awaitCalls(int calls) throws InterruptedException {
        while (served < calls) {
            wait();
        }
    }
}
