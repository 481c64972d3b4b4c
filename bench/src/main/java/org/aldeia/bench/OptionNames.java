package org.aldeia.bench;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/** How rows are named on the command line and in file names: ALDEIA_STATIC_SCI is aldeia-static-sci. */
final class OptionNames {

    private OptionNames() {
    }

    static String of(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The constant of {@code type} named {@code optionName}, if any. */
    static <E extends Enum<E>> Optional<E> find(Class<E> type, String optionName) {
        return Arrays.stream(type.getEnumConstants()).filter(c -> of(c).equals(optionName)).findFirst();
    }
}
