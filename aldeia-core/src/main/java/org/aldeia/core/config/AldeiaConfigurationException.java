package org.aldeia.core.config;

import java.io.IOException;

/**
 * A configuration file Aldeia cannot use. It is an {@link IOException} so that it reaches the
 * application through the {@code throws IOException} of the socket constructors that
 * initialise the environment. The message is one sentence naming the file, the line and the
 * key, e.g. {@code aldeia.conf:3: key 'mtu': 'abc' is not a number}.
 */
public final class AldeiaConfigurationException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String file;
    private final int line;
    private final String key;

    /**
     * @param file the configuration file (or the system property) the error is in
     * @param line the 1-based line, or 0 when the error is not on one line
     * @param key the key involved, or null when the line has none
     */
    AldeiaConfigurationException(String file, int line, String key, String problem, Throwable cause) {
        super(file + (line > 0 ? ":" + line : "") + ": " + (key == null ? "" : "key '" + key + "': ")
                + problem, cause);
        this.file = file;
        this.line = line;
        this.key = key;
    }

    AldeiaConfigurationException(String file, int line, String key, String problem) {
        this(file, line, key, problem, null);
    }

    /** The configuration file the error is in. */
    public String file() {
        return file;
    }

    /** The 1-based line of the error, or 0 when it concerns the whole file. */
    public int line() {
        return line;
    }

    /** The key involved, or null. */
    public String key() {
        return key;
    }
}
