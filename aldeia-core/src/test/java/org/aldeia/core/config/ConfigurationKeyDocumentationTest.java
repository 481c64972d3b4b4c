package org.aldeia.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The README's configuration table and config/aldeia.conf.example say what
 * {@link ConfigurationKey} declares, key for key: a key added, renamed or changed in one place
 * and not the others fails here, with the line that should be there.
 */
class ConfigurationKeyDocumentationTest {

    /** The repository's root: this module's parent directory. */
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    /** "| `key` |" at the start of a table row. */
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z_]+)` \\|.*");
    /** "key = value" or "# key = value" alone on a line. */
    private static final Pattern SETTING = Pattern.compile("^#? ?([a-z][a-z0-9_]*) = (\\S+)$");

    @Test
    void theReadmeTableHasOneRowPerKeyExactlyAsDeclared() throws IOException {
        List<String> lines = Files.readAllLines(ROOT.resolve("README.md"));
        int start = lines.indexOf("## Configuration reference");
        assertTrue(start >= 0, "README.md has no '## Configuration reference' section");
        Map<String, String> rows = new LinkedHashMap<>();
        for (String line : lines.subList(start, lines.size())) {
            if (line.startsWith("## ") && !line.equals(lines.get(start))) {
                break;
            }
            Matcher m = ROW.matcher(line);
            if (m.matches()) {
                assertEquals(null, rows.put(m.group(1), line), "README.md lists key " + m.group(1) + " twice");
            }
        }
        for (ConfigurationKey key : ConfigurationKey.values()) {
            assertEquals(key.readmeRow(), rows.remove(key.key()), "README.md's row of key " + key.key());
        }
        assertTrue(rows.isEmpty(), "README.md lists keys that are not declared: " + rows.keySet());
    }

    @Test
    void theExampleShowsEveryKeyOnceWithItsDefaultOrAnExample() throws IOException {
        List<String> settings = new ArrayList<>();
        for (String line : Files.readAllLines(ROOT.resolve("config/aldeia.conf.example"))) {
            Matcher m = SETTING.matcher(line.strip());
            if (m.matches()) {
                settings.add(m.group(1) + " = " + m.group(2));
            }
        }
        for (ConfigurationKey key : ConfigurationKey.values()) {
            String expected = key.key() + " = " + key.exampleValue();
            assertTrue(settings.remove(expected), "config/aldeia.conf.example has no line '" + expected
                    + "' (or '# " + expected + "'); its settings: " + settings);
        }
        assertTrue(settings.isEmpty(), "config/aldeia.conf.example sets keys twice or keys not declared: " + settings);
    }

    @Test
    void everyKeyHasADistinctNameAndAValueReaderAndTheParserKnowsThemAll() {
        assertEquals(ConfigurationKey.values().length,
                Arrays.stream(ConfigurationKey.values()).map(ConfigurationKey::key).distinct().count());
        for (ConfigurationKey key : ConfigurationKey.values()) {
            assertEquals(key, ConfigurationKey.named(key.key()));
            assertTrue(ConfigurationKey.names().contains(key.key()));
        }
    }
}
