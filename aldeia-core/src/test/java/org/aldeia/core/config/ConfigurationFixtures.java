package org.aldeia.core.config;

import java.util.Map;

/**
 * What tests of other packages build through this package's own factories, which are not
 * public API: a configuration from given values (as the file parser makes one), and the error
 * a configuration file's line gives.
 */
public final class ConfigurationFixtures {

    private ConfigurationFixtures() {
    }

    /** A configuration of {@code values} over the defaults, with the default socket rules. */
    public static AldeiaConfiguration configuration(String source, Map<ConfigurationKey, Object> values) {
        return AldeiaConfiguration.of(source, values, SocketRules.defaults());
    }

    /** The error the parser reports for {@code key} at {@code line} of {@code file}. */
    public static AldeiaConfigurationException error(String file, int line, String key, String problem) {
        return new AldeiaConfigurationException(file, line, key, problem);
    }
}
