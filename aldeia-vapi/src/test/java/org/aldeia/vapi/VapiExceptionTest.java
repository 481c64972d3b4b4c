package org.aldeia.vapi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

import org.junit.jupiter.api.Test;

class VapiExceptionTest {

    @Test
    void messageNamesFunctionCodeTextAndLastError() {
        Vapi vapi = mock(Vapi.class);
        when(vapi.VAPI_strerror(VapiConstants.VAPI_EINVAL_QP_STATE)).thenReturn("invalid QP state");
        when(vapi.EVAPI_last_error()).thenReturn("VAPI_post_sr: QP 7 is in RESET");
        VapiException e = assertThrows(VapiException.class,
                () -> VapiException.check(vapi, "VAPI_post_sr", VapiConstants.VAPI_EINVAL_QP_STATE));
        assertEquals("VAPI_post_sr failed: VAPI_EINVAL_QP_STATE (invalid QP state): "
                + "VAPI_post_sr: QP 7 is in RESET", e.getMessage());
        assertEquals(VapiConstants.VAPI_EINVAL_QP_STATE, e.code());
    }

    @Test
    void missingTextsAreLeftOutAndUnknownCodesShowTheirNumber() {
        Vapi vapi = mock(Vapi.class);
        assertEquals("VAPI_alloc_pd failed: VAPI return code -42",
                VapiException.of(vapi, "VAPI_alloc_pd", -42).getMessage());
        assertEquals("VAPI_WR_FLUSH_ERR", VapiConstants.statusName(VapiConstants.VAPI_WR_FLUSH_ERR));
    }
}
