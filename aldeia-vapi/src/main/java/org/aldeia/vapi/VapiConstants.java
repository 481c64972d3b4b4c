package org.aldeia.vapi;

/** The constants of vapi.h: return codes, QP states, opcodes, completion types and statuses. */
public final class VapiConstants {

    // ---- return codes
    public static final int VAPI_OK = 0;
    /** A poll found no completion (not an error). */
    public static final int VAPI_CQ_EMPTY = 1;
    /** A blocking poll ran out of time (not an error). */
    public static final int VAPI_ETIMEDOUT = 2;
    public static final int VAPI_EGEN = -1;
    public static final int VAPI_EINVAL_PARAM = -2;
    public static final int VAPI_EINVAL_HCA_HNDL = -3;
    public static final int VAPI_EINVAL_QP_HNDL = -4;
    public static final int VAPI_EINVAL_CQ_HNDL = -5;
    public static final int VAPI_EINVAL_QP_STATE = -6;
    public static final int VAPI_ENOMEM = -7;
    public static final int VAPI_EAGAIN = -8;
    public static final int VAPI_ENOSYS = -9;

    /** EVAPI_QP_ADDRESS_MAX: the longest queue-pair address (EVAPI_query_qp_address). */
    public static final int QP_ADDRESS_MAX = 256;

    // ---- enum VAPI_qp_state
    public static final int VAPI_RESET = 0;
    public static final int VAPI_INIT = 1;
    public static final int VAPI_RTR = 2;
    public static final int VAPI_RTS = 3;
    public static final int VAPI_ERR = 4;

    // ---- enum VAPI_wr_opcode
    public static final int VAPI_SEND = 1;
    public static final int VAPI_RECEIVE = 2;

    // ---- enum VAPI_comp_type
    public static final int VAPI_SIGNALED = 0;
    public static final int VAPI_UNSIGNALED = 1;

    // ---- enum VAPI_wc_status
    public static final int VAPI_SUCCESS = 0;
    public static final int VAPI_WR_FLUSH_ERR = 1;
    public static final int VAPI_LOC_LEN_ERR = 2;
    public static final int VAPI_REM_ABORT_ERR = 3;
    public static final int VAPI_GENERAL_ERR = 4;

    /** {@code VAPI_hca_port_t.state} of an active port. */
    public static final int PORT_ACTIVE = 4;

    private static final String[] ERROR_NAMES = {
        null, "VAPI_EGEN", "VAPI_EINVAL_PARAM", "VAPI_EINVAL_HCA_HNDL", "VAPI_EINVAL_QP_HNDL",
        "VAPI_EINVAL_CQ_HNDL", "VAPI_EINVAL_QP_STATE", "VAPI_ENOMEM", "VAPI_EAGAIN", "VAPI_ENOSYS"
    };
    private static final String[] STATUS_NAMES = {
        "VAPI_SUCCESS", "VAPI_WR_FLUSH_ERR", "VAPI_LOC_LEN_ERR", "VAPI_REM_ABORT_ERR",
        "VAPI_GENERAL_ERR"
    };

    private VapiConstants() {
    }

    /** The C name of a return code, e.g. {@code VAPI_ENOMEM}. */
    public static String codeName(int ret) {
        switch (ret) {
            case VAPI_OK: return "VAPI_OK";
            case VAPI_CQ_EMPTY: return "VAPI_CQ_EMPTY";
            case VAPI_ETIMEDOUT: return "VAPI_ETIMEDOUT";
            default:
                return ret < 0 && -ret < ERROR_NAMES.length ? ERROR_NAMES[-ret] : "VAPI return code " + ret;
        }
    }

    /** The C name of a work-completion status, e.g. {@code VAPI_REM_ABORT_ERR}. */
    public static String statusName(int status) {
        return status >= 0 && status < STATUS_NAMES.length
                ? STATUS_NAMES[status] : "VAPI completion status " + Integer.toUnsignedString(status);
    }
}
