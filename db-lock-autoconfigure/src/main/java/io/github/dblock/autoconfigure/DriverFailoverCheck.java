package io.github.dblock.autoconfigure;

import java.sql.DriverManager;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.dblock.LockChecks;

import org.jspecify.annotations.Nullable;

/**
 * What the JDBC driver's own failover adds to a lock statement's time: MariaDB
 * Connector/J's {@code loadbalance}, {@code sequential}, {@code replication} and
 * {@code load-balance-read} URLs reconnect to another host inside the statement that
 * found its host dead, before the statement fails, and db-lock cannot cut that short.
 * <p>
 * While every host is on the driver's deny list (JVM-wide, 60 s: a member that died and
 * members whose statements stalled past the network timeout while the cluster noticed the
 * death), the reconnect tries the host denied first again and again, 250 ms apart, up to
 * {@code retriesAllDown} times (120 by default: 30 s), each try taking up to
 * {@code connectTimeout}. {@link #RECOMMENDED} keeps that within the default statement
 * timeout.
 */
final class DriverFailoverCheck {

	/** The driver's pause between tries of denied hosts. */
	static final Duration RETRY_PAUSE = Duration.ofMillis(250);

	/**
	 * Settings that keep the driver's failover within the default statement timeout: two
	 * tries of up to 500 ms each, 1.5 s in all.
	 */
	static final String RECOMMENDED = "retriesAllDown=2&connectTimeout=500";

	private static final Pattern FAILOVER_URL = Pattern
		.compile("^jdbc:mariadb:(loadbalance|sequential|replication|load-balance-read):.*", Pattern.CASE_INSENSITIVE);

	private DriverFailoverCheck() {
	}

	/**
	 * The longest the driver's failover may add to one statement on a URL, or
	 * {@code null} if the URL does not fail over within a statement.
	 * @param url the JDBC URL the connections were made with
	 * @return {@code retriesAllDown} times ({@code connectTimeout} plus the pause between
	 * tries), or {@code null}
	 */
	static @Nullable Duration failoverTime(String url) {
		if (!FAILOVER_URL.matcher(url).matches()) {
			return null;
		}
		long retries = option(url, "retriesAllDown", 120);
		int loginTimeout = DriverManager.getLoginTimeout();
		long connectTimeout = option(url, "connectTimeout", (loginTimeout > 0) ? loginTimeout * 1000L : 30_000);
		return Duration.ofMillis(connectTimeout).plus(RETRY_PAUSE).multipliedBy(retries);
	}

	/**
	 * A warning when the driver's failover may hold a statement longer than the statement
	 * timeout, or {@code null}.
	 * @param url the JDBC URL the connections were made with
	 * @param statementTimeout {@code db-lock.statement-timeout}
	 * @return the warning, or {@code null}
	 */
	static @Nullable String warning(String url, Duration statementTimeout) {
		Duration failover = failoverTime(url);
		if (failover == null || failover.compareTo(statementTimeout) <= 0) {
			return null;
		}
		return "db-lock's JDBC URL fails over inside a statement (MariaDB Connector/J " + url.split(":")[2]
				+ "): a lock statement whose host dies waits for the driver to reconnect, up to retriesAllDown x "
				+ "(connectTimeout + 250ms) = " + LockChecks.format(failover) + ", beyond db-lock.statement-timeout ("
				+ LockChecks.format(statementTimeout) + "), and a caller waits that long past its wait. Limit it on the "
				+ "URL, e.g. " + RECOMMENDED + " (1.5s; see docs/clustered-databases.md)";
	}

	private static long option(String url, String name, long fallback) {
		Matcher matcher = Pattern.compile("[?&]" + name.toLowerCase(Locale.ROOT) + "=(\\d+)")
			.matcher(url.toLowerCase(Locale.ROOT));
		return matcher.find() ? Long.parseLong(matcher.group(1)) : fallback;
	}

}
