package org.aldeia.microvapi.parity;

import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.aldeia.core.config.AldeiaConfiguration;
import org.aldeia.deck.DeckLauncher;
import org.aldeia.microvapi.TestLoopback;

/**
 * The {@link FarEnd} JVM of one {@link SocketKind}, started with this JVM's classpath and
 * Aldeia configuration (so both ends use the same transport), and the requests sent to it.
 * Closing it kills the JVM.
 */
final class FarEndProcess implements AutoCloseable {

    /** Bounds every wait for an answer, so a far end that hangs fails the test instead. */
    private static final int ANSWER_TIMEOUT_MILLIS = 20_000;

    private final Process process;
    private final Path stderr;
    private final int controlPort;

    private FarEndProcess(Process process, Path stderr, int controlPort) {
        this.process = process;
        this.stderr = stderr;
        this.controlPort = controlPort;
    }

    static FarEndProcess start(SocketKind kind) throws IOException {
        List<String> options = new ArrayList<>(TestLoopback.jvmOptions());
        String configuration = System.getProperty(AldeiaConfiguration.PROPERTY);
        if (configuration != null) {
            options.add("-D" + AldeiaConfiguration.PROPERTY + "=" + configuration);
        }
        Path logs = Files.createDirectories(Path.of("target", "child-jvms"));
        Path stderr = Files.createTempFile(logs, "FarEnd-" + kind + "-", ".err");
        Process process = new ProcessBuilder(DeckLauncher.javaCommand(options, FarEnd.class, List.of(kind.name())))
                .redirectError(stderr.toFile())
                .start();
        BufferedReader stdout = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8));
        String line = stdout.readLine();
        if (line == null || !line.startsWith("CONTROL ")) {
            process.destroyForcibly();
            throw new IOException("the far end JVM did not announce its control port (said " + line + "); stderr:\n"
                    + Files.readString(stderr));
        }
        return new FarEndProcess(process, stderr, Integer.parseInt(line.substring("CONTROL ".length())));
    }

    /** Asks the far end to listen and run {@code scenario} on the connection it accepts. */
    Request listen(FarEnd.Scenario scenario) throws IOException {
        return new Request("LISTEN " + scenario);
    }

    /** Asks the far end to connect to {@code port} on the loopback address and run {@code scenario}. */
    Request connect(int port, FarEnd.Scenario scenario) throws IOException {
        return new Request("CONNECT " + port + " " + scenario);
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** One request in progress: its answers arrive in order on a control connection. */
    final class Request implements AutoCloseable {

        private final Socket control;
        private final DataInputStream answers;
        private final DataOutputStream requests;

        private Request(String request) throws IOException {
            control = new Socket(TestLoopback.address(), controlPort);
            control.setSoTimeout(ANSWER_TIMEOUT_MILLIS);
            answers = new DataInputStream(control.getInputStream());
            requests = new DataOutputStream(control.getOutputStream());
            requests.writeUTF(request);
        }

        /** Lets a {@link FarEnd.Scenario#STALL} go on to drain its connection. */
        void release() throws IOException {
            requests.writeUTF("RELEASE");
        }

        /** The next answer, which must start with {@code prefix}; returns the rest of it. */
        String answer(String prefix) throws IOException {
            String answer = answers.readUTF();
            if (!answer.startsWith(prefix + " ")) {
                throw unexpected(answer, prefix);
            }
            return answer.substring(prefix.length() + 1);
        }

        private IOException unexpected(String answer, String expected) throws IOException {
            return new IOException("the far end answered \"" + answer + "\" instead of \"" + expected
                    + " ...\"; its stderr:\n" + Files.readString(stderr));
        }

        /** The port the far end listens on, after {@link #listen}. */
        int port() throws IOException {
            return Integer.parseInt(answer("PORT"));
        }

        /** The far end's local port, after {@link #connect}. */
        int localPort() throws IOException {
            return Integer.parseInt(answer("LOCAL"));
        }

        /**
         * What the far end saw, once its scenario ended and it closed its socket; skips the
         * LOCAL announcement of a connect the caller did not ask about.
         */
        String outcome() throws IOException {
            String answer = answers.readUTF();
            if (answer.startsWith("LOCAL ")) {
                answer = answers.readUTF();
            }
            if (!answer.startsWith("DONE ")) {
                throw unexpected(answer, "DONE");
            }
            return answer.substring("DONE ".length());
        }

        @Override
        public void close() throws IOException {
            control.close();
        }
    }
}
