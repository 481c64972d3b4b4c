package org.aldeia.samples;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The command line of a sample: an optional role word ({@code server}, {@code client}, ...)
 * followed by {@code --name value} options and {@code --flag} switches. Unknown options are
 * errors, so a typo never silently runs the default benchmark.
 */
final class Arguments {

    private final String role;
    private final Map<String, String> values;
    private final Set<String> flagsGiven;

    private Arguments(String role, Map<String, String> values, Set<String> flagsGiven) {
        this.role = role;
        this.values = values;
        this.flagsGiven = flagsGiven;
    }

    /**
     * Parses {@code args}; {@code valueOptions} take one value, {@code flagOptions} take none
     * (both without the leading dashes).
     */
    static Arguments parse(String[] args, Set<String> valueOptions, Set<String> flagOptions) {
        String role = null;
        Map<String, String> values = new HashMap<>();
        Set<String> flags = new HashSet<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--")) {
                if (role != null || i != 0) {
                    throw new IllegalArgumentException("unexpected argument '" + arg + "'");
                }
                role = arg;
                continue;
            }
            String name = arg.substring(2);
            if (flagOptions.contains(name)) {
                flags.add(name);
            } else if (valueOptions.contains(name)) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("option " + arg + " needs a value");
                }
                values.put(name, args[++i]);
            } else {
                throw new IllegalArgumentException("unknown option " + arg);
            }
        }
        return new Arguments(role, values, flags);
    }

    /** The leading role word, or {@code null} when none was given. */
    String role() {
        return role;
    }

    boolean flag(String name) {
        return flagsGiven.contains(name);
    }

    String string(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    /** An optional integer option of at least {@code min}; {@code fallback} when absent. */
    int integer(String name, int fallback, int min) {
        return values.containsKey(name) ? requiredInteger(name, min) : fallback;
    }

    /** An integer option that must be given, of at least {@code min}. */
    int requiredInteger(String name, int min) {
        String text = values.get(name);
        if (text == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        int value;
        try {
            value = Integer.parseInt(text.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be an integer, not '" + text + "'");
        }
        if (value < min) {
            throw new IllegalArgumentException("--" + name + " must be at least " + min + ", not " + value);
        }
        return value;
    }

    SocketKind kind() {
        String value = values.get("impl");
        if (value == null) {
            throw new IllegalArgumentException("--impl aldeia|jdk is required");
        }
        return SocketKind.parse(value);
    }

    /** A list of sizes (see {@link Sizes#parse}); {@code fallback} when the option is absent. */
    List<Integer> sizes(String name, String fallback) {
        try {
            return Sizes.parse(values.getOrDefault(name, fallback));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + name + ": " + e.getMessage());
        }
    }
}
