package org.aldeia.samples.rmi;

import java.rmi.Remote;
import java.rmi.RemoteException;

/** The remote interface of the RMI sample: a call that carries a few KB each way. */
public interface Reverser extends Remote {

    /** The name the server binds its object under in its registry. */
    String REGISTRY_NAME = "aldeia-reverser";

    /** {@code values} in reverse order. */
    int[] reverse(int[] values) throws RemoteException;
}
