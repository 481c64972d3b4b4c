package org.aldeia.agent;

import java.rmi.Remote;
import java.rmi.RemoteException;

/** The remote interface of the plain RMI programs: an argument and a result worth marshalling. */
public interface Reverser extends Remote {

    /** The registry name the server binds its object under. */
    String NAME = "reverser";

    /** {@code values} in reverse order. */
    int[] reverse(int[] values) throws RemoteException;
}
