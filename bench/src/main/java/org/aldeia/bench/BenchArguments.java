package org.aldeia.bench;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/** {@code --name value} options and {@code --flag} switches; anything else is an error, so a typo never runs a default. */
final class BenchArguments {

    private static final Set<String> VALUE_OPTIONS = Set.of("transport", "rendezvous", "scratch", "out", "only", "runs", "placement");
    private static final Set<String> FLAG_OPTIONS = Set.of("quick", "pin");

    private final Map<String, String> values;
    private final Set<String> flags;

    private BenchArguments(Map<String, String> values, Set<String> flags) {
        this.values = values;
        this.flags = flags;
    }

    static BenchArguments parse(String[] args) {
        Map<String, String> values = new HashMap<>();
        Set<String> flags = new HashSet<>();
        for (int i = 0; i < args.length; i++) {
            String name = args[i].startsWith("--") ? args[i].substring(2) : null;
            if (name != null && FLAG_OPTIONS.contains(name)) {
                flags.add(name);
            } else if (name != null && VALUE_OPTIONS.contains(name)) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("option --" + name + " needs a value");
                }
                values.put(name, args[++i]);
            } else {
                throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
            }
        }
        return new BenchArguments(values, flags);
    }

    boolean flag(String name) {
        return flags.contains(name);
    }

    String value(String name, String fallback) {
        return values.getOrDefault(name, fallback);
    }

    String required(String name) {
        String value = values.get(name);
        if (value == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return value;
    }
}
