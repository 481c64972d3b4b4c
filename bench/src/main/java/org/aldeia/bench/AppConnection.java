package org.aldeia.bench;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.net.Socket;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One client connection of the application phase, shaped like an RPC client: the caller writes
 * a request object and waits on a future; a reader thread of the connection reads responses
 * and completes the futures by id. So every response crosses from the thread that reads it to
 * the thread that waits for it, as in real programs.
 */
final class AppConnection implements AutoCloseable {

    /** How long a call may wait for its response before the phase fails instead of hanging. */
    private static final long CALL_LIMIT_SECONDS = 30;

    private final Socket socket;
    private final ObjectOutputStream out;
    private final Map<Long, CompletableFuture<AppMessages.Response>> pending = new ConcurrentHashMap<>();
    private final Thread reader;
    private volatile IOException readFailure;
    /** Set by {@link #close()}: the reader's exception is then the close, not a failure. */
    private volatile boolean closing;

    AppConnection(Socket socket, String name) throws IOException {
        this.socket = socket;
        this.out = new ObjectOutputStream(new BufferedOutputStream(socket.getOutputStream()));
        out.flush(); // the stream header, which the server's ObjectInputStream waits for
        this.reader = new Thread(this::readResponses, name + "-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /** Sends {@code request}, waits for its response and checks it. */
    void call(AppMessages.Request request) throws IOException {
        CompletableFuture<AppMessages.Response> response = new CompletableFuture<>();
        pending.put(request.id(), response);
        if (readFailure != null) {
            throw readFailure; // the reader is gone: nobody would complete the future
        }
        out.writeObject(request);
        out.reset(); // as RPC code does: the stream's handle table would otherwise keep every request
        out.flush();
        AppMessages.Response answer;
        try {
            answer = response.get(CALL_LIMIT_SECONDS, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new IOException("request " + request.id() + ": " + e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new IOException("request " + request.id() + " had no response in " + CALL_LIMIT_SECONDS + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for request " + request.id(), e);
        }
        if (answer.crc() != AppMessages.crc(request.payload()) || !Arrays.equals(answer.payload(), request.payload())) {
            throw new IOException("the response to request " + request.id() + " does not match it");
        }
    }

    private void readResponses() {
        try (ObjectInputStream in = new ObjectInputStream(new BufferedInputStream(socket.getInputStream()))) {
            while (true) {
                AppMessages.Response response = (AppMessages.Response) in.readObject();
                CompletableFuture<AppMessages.Response> waiting = pending.remove(response.id());
                if (waiting == null) {
                    throw new IOException("a response to request " + response.id() + ", which nobody sent or waits for");
                }
                waiting.complete(response);
            }
        } catch (IOException | ClassNotFoundException | ClassCastException e) {
            // Not socket.isClosed(): leaving the try closed the stream, and so the socket, already.
            if (!closing) {
                readFailure = e instanceof IOException io ? io : new IOException(e);
                pending.values().forEach(f -> f.completeExceptionally(readFailure));
            }
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        closing = true;
        try {
            socket.close();
        } finally {
            reader.join(TimeUnit.SECONDS.toMillis(10));
        }
        if (readFailure != null) {
            throw readFailure;
        }
    }
}
