package org.aldeia.agent;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * An ordinary HTTP client that knows nothing of Aldeia: GETs the URL in {@code args[0]} with
 * {@link HttpURLConnection} and prints {@code status <code> bytes <n> sha256 <hex>} of the body.
 */
public final class HttpFetch {

    private HttpFetch() {}

    public static void main(String[] args) throws IOException, NoSuchAlgorithmException {
        HttpURLConnection connection = (HttpURLConnection) URI.create(args[0]).toURL().openConnection();
        connection.setConnectTimeout(20_000);
        connection.setReadTimeout(20_000);
        try {
            int status = connection.getResponseCode();
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            long bytes = 0;
            try (InputStream body = connection.getInputStream()) {
                byte[] buffer = new byte[8192];
                for (int n; (n = body.read(buffer)) != -1; bytes += n) {
                    sha256.update(buffer, 0, n);
                }
            }
            System.out.println("status " + status + " bytes " + bytes + " sha256 " + HexFormat.of().formatHex(sha256.digest()));
        } finally {
            connection.disconnect();
        }
    }
}
