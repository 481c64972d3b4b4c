package org.aldeia.vapi;

import java.io.IOException;

/** A vapi.h function returned a failure code; the message names the function, code and cause. */
public final class VapiException extends IOException {
    private static final long serialVersionUID = 1L;

    private final String function;
    private final int code;

    public VapiException(String function, int code, String codeText, String lastError) {
        super(function + " failed: " + VapiConstants.codeName(code)
                + (isBlank(codeText) ? "" : " (" + codeText + ")")
                + (isBlank(lastError) ? "" : ": " + lastError));
        this.function = function;
        this.code = code;
    }

    /** Throws unless {@code ret} is {@code VAPI_OK}. */
    public static void check(Vapi vapi, String function, int ret) throws VapiException {
        if (ret != VapiConstants.VAPI_OK) {
            throw of(vapi, function, ret);
        }
    }

    /**
     * Builds the exception for a failed call; must run on the calling thread right after the
     * call, because {@code EVAPI_last_error} is per thread.
     */
    public static VapiException of(Vapi vapi, String function, int ret) {
        return new VapiException(function, ret, vapi.VAPI_strerror(ret), vapi.EVAPI_last_error());
    }

    /** The C function that failed, e.g. {@code VAPI_create_qp}. */
    public String function() {
        return function;
    }

    /** The {@code VAPI_ret_t} it returned. */
    public int code() {
        return code;
    }

    private static boolean isBlank(String s) {
        return s == null || s.isBlank();
    }
}
