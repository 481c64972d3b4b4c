package org.aldeia.core.config;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The kinds of value an aldeia.conf key takes ({@link ConfigurationKey}): each turns the text
 * after {@code =} into the value, or says in one clause what is wrong with it.
 */
@FunctionalInterface
interface ConfigurationValue {

    /**
     * @param text the value as written, stripped, never empty
     * @param directory the configuration file's directory, against which paths are resolved
     * @throws Problem saying what is wrong, to follow "key 'name': "
     */
    Object parse(String text, Path directory) throws Problem;

    /** What is wrong with a value, as a clause. */
    final class Problem extends Exception {
        private static final long serialVersionUID = 1L;

        Problem(String message) {
            super(message);
        }
    }

    /** A whole number in min..max. */
    static ConfigurationValue range(long min, long max) {
        return (text, directory) -> {
            BigInteger value;
            try {
                value = new BigInteger(text);
            } catch (NumberFormatException e) {
                throw new Problem("'" + text + "' is not a number");
            }
            if (value.compareTo(BigInteger.valueOf(min)) < 0 || value.compareTo(BigInteger.valueOf(max)) > 0) {
                throw new Problem(value + " is out of range " + min + ".." + max);
            }
            return value.intValueExact();
        };
    }

    /** One of {@code allowed}; {@code reserved} are names a later version implements. */
    static ConfigurationValue choice(List<String> allowed, List<String> reserved, String what) {
        return (text, directory) -> {
            if (allowed.contains(text)) {
                return text;
            }
            String options = "allowed: " + String.join(", ", allowed);
            if (reserved.contains(text)) {
                throw new Problem("'" + text + "' is not implemented in this version (" + options + ")");
            }
            throw new Problem("'" + text + "' is not " + what + " (" + options + ")");
        };
    }

    /** {@code on} or {@code off}. */
    static ConfigurationValue onOff() {
        return (text, directory) -> switch (text) {
            case "on" -> Boolean.TRUE;
            case "off" -> Boolean.FALSE;
            default -> throw new Problem("'" + text + "' is neither on nor off");
        };
    }

    /** Text matching {@code pattern}. */
    static ConfigurationValue matching(String pattern, String what) {
        Pattern compiled = Pattern.compile(pattern);
        return (text, directory) -> {
            if (!compiled.matcher(text).matches()) {
                throw new Problem("'" + text + "' is not " + what);
            }
            return text;
        };
    }

    /**
     * An IPv4 address in dotted form or an IPv6 literal (with or without brackets, a %scope
     * allowed) that is an address of this host; no name, so nothing is looked up.
     */
    static ConfigurationValue localAddress() {
        Pattern dotted = Pattern.compile("(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");
        return (text, directory) -> {
            // Java reads text with a ':' as an IPv6 literal only, never as a name to look up.
            if (!dotted.matcher(text).matches() && !text.contains(":")) {
                throw new Problem("'" + text + "' is not an IPv4 address such as 10.1.0.5 nor an IPv6 address such as "
                        + "fd00::5");
            }
            try {
                InetAddress address = InetAddress.getByName(text); // a literal: parsed, not looked up
                if (!address.isLoopbackAddress() && NetworkInterface.getByInetAddress(address) == null) {
                    throw new Problem(text + " is not an address of this host");
                }
            } catch (IOException e) {
                throw new Problem("'" + text + "' cannot be checked (" + e + ")");
            }
            return text;
        };
    }

    /** A path, relative to the configuration file's directory. */
    static ConfigurationValue path() {
        return (text, directory) -> directory.resolve(text);
    }

    /**
     * A file that holds a secret: a regular file of this user's that nobody else may read or
     * write (mode 0600 or stricter), as ssh asks of a private key; its size in minBytes..maxBytes.
     */
    static ConfigurationValue secretFile(int minBytes, int maxBytes) {
        return (text, directory) -> {
            Path file = directory.resolve(text);
            PosixFileAttributes attributes;
            try {
                attributes = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e) {
                throw new Problem(file + " cannot be read (" + e + ")");
            }
            if (!attributes.isRegularFile()) {
                throw new Problem(file + " is not a regular file");
            }
            Set<PosixFilePermission> others = EnumSet.copyOf(attributes.permissions());
            others.retainAll(EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
                    PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
                    PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE));
            if (!others.isEmpty()) {
                throw new Problem(file + " may be read or written by others (" + others + "); it must be mode 0600 "
                        + "(chmod 600 " + file + ")");
            }
            String user = System.getProperty("user.name");
            if (!attributes.owner().getName().equals(user)) {
                throw new Problem(file + " belongs to " + attributes.owner().getName() + ", not to " + user);
            }
            if (attributes.size() < minBytes || attributes.size() > maxBytes) {
                throw new Problem(file + " holds " + attributes.size() + " bytes, not " + minBytes + ".." + maxBytes);
            }
            return file;
        };
    }
}
