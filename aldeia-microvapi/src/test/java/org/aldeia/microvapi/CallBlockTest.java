package org.aldeia.microvapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.jna.Memory;
import org.aldeia.deck.DeckLibraries;
import org.aldeia.vapi.Vapi;
import org.aldeia.vapi.VapiConstants;
import org.aldeia.vapi.VapiLibrary;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The per-message calls go to libmicrovapi through a call block (vapi.h's EVAPI_call_t): what
 * the library reads there is what the caller passed. A handle that names no HCA is refused by
 * the call the block stands for, naming that handle, so the block carried it through.
 */
class CallBlockTest {

    private static final long NO_HCA = 0x00000abc00000007L;
    private static Vapi vapi;

    @BeforeAll
    static void load() throws Exception {
        DeckLibraries.loadAfterDeck("microvapi");
        vapi = VapiLibrary.load("microvapi", "CallBlockTest");
    }

    @Test
    void aPostOfSendsCarriesItsArguments() {
        try (Memory list = new Memory(64)) {
            assertEquals(VapiConstants.VAPI_EINVAL_HCA_HNDL, vapi.EVAPI_post_sr_list(NO_HCA, 5, 1, list));
        }
        assertRefused("EVAPI_post_sr_list");
    }

    @Test
    void aPostOfReceivesCarriesItsArguments() {
        try (Memory list = new Memory(64)) {
            assertEquals(VapiConstants.VAPI_EINVAL_HCA_HNDL, vapi.EVAPI_post_rr_list(NO_HCA, 5, 1, list));
        }
        assertRefused("EVAPI_post_rr_list");
    }

    @Test
    void aWaitCarriesItsArguments() {
        assertEquals(VapiConstants.VAPI_EINVAL_HCA_HNDL, vapi.EVAPI_wait_cq(NO_HCA, 5, 1000));
        assertRefused("EVAPI_wait_cq");
    }

    /** The library's account names the call the block stood for and the HCA handle it carried. */
    private static void assertRefused(String function) {
        String error = vapi.EVAPI_last_error();
        assertTrue(error.startsWith(function) && error.contains("0xabc00000007"), error);
    }
}
