package org.aldeia.agent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.aldeia.core.config.AldeiaConfiguration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** How the agent argument and -Daldeia.configuration combine (the install itself: the *IT tests). */
class AldeiaAgentTest {

    private String saved;

    @BeforeEach
    void clearProperty() {
        saved = System.getProperty(AldeiaConfiguration.PROPERTY);
        System.clearProperty(AldeiaConfiguration.PROPERTY);
    }

    @AfterEach
    void restoreProperty() {
        if (saved == null) {
            System.clearProperty(AldeiaConfiguration.PROPERTY);
        } else {
            System.setProperty(AldeiaConfiguration.PROPERTY, saved);
        }
    }

    @Test
    void theAgentArgumentNamesTheConfigurationFile() {
        AldeiaAgent.useConfiguration("/etc/aldeia.conf");
        assertEquals("/etc/aldeia.conf", System.getProperty(AldeiaConfiguration.PROPERTY));
    }

    @Test
    void noArgumentLeavesThePropertyUnset() {
        AldeiaAgent.useConfiguration(null);
        AldeiaAgent.useConfiguration(" ");
        assertNull(System.getProperty(AldeiaConfiguration.PROPERTY));
    }

    @Test
    void noArgumentKeepsAFileNamedWithMinusD() {
        System.setProperty(AldeiaConfiguration.PROPERTY, "/etc/aldeia.conf");
        AldeiaAgent.useConfiguration("");
        assertEquals("/etc/aldeia.conf", System.getProperty(AldeiaConfiguration.PROPERTY));
    }

    @Test
    void theSameFileSpelledTwoWaysIsAccepted() {
        System.setProperty(AldeiaConfiguration.PROPERTY, "/etc/./aldeia.conf");
        AldeiaAgent.useConfiguration("/etc/aldeia.conf");
        assertEquals("/etc/aldeia.conf", System.getProperty(AldeiaConfiguration.PROPERTY));
    }

    @Test
    void aDifferentFileNamedWithMinusDIsRefusedNamingBoth() {
        System.setProperty(AldeiaConfiguration.PROPERTY, "/etc/other.conf");
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> AldeiaAgent.useConfiguration("/etc/aldeia.conf"));
        assertTrue(refused.getMessage().contains("'/etc/aldeia.conf'") && refused.getMessage().contains("'/etc/other.conf'"),
                refused.getMessage());
        assertEquals("/etc/other.conf", System.getProperty(AldeiaConfiguration.PROPERTY));
    }
}
