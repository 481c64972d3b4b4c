package org.aldeia.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/** The rows a run measures (--only), in the table's order: transports, then anchor tools. */
record Selection(List<Transport> transports, List<Anchor> anchors) {

    /** Every row. */
    static final Selection ALL = new Selection(List.of(Transport.values()), List.of(Anchor.values()));

    /** The rows named in a comma-separated list (null: every row); an unknown name is an error. */
    static Selection parse(String only) {
        if (only == null) {
            return ALL;
        }
        List<Transport> transports = new ArrayList<>();
        List<Anchor> anchors = new ArrayList<>();
        for (String name : only.split(",")) {
            String trimmed = name.trim();
            Optional<Transport> transport = OptionNames.find(Transport.class, trimmed);
            Optional<Anchor> anchor = OptionNames.find(Anchor.class, trimmed);
            if (transport.isEmpty() && anchor.isEmpty()) {
                throw new IllegalArgumentException("unknown row '" + trimmed + "'; known: " + String.join(", ", names()));
            }
            transport.ifPresent(transports::add);
            anchor.ifPresent(anchors::add);
        }
        return new Selection(transports.stream().distinct().sorted().toList(), anchors.stream().distinct().sorted().toList());
    }

    /** Every row's name, as --only takes it. */
    static List<String> names() {
        return Stream.concat(Arrays.stream(Transport.values()).map(Transport::optionName),
                Arrays.stream(Anchor.values()).map(Anchor::optionName)).toList();
    }
}
