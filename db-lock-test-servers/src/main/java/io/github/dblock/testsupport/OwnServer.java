package io.github.dblock.testsupport;

/**
 * A database server of a test's own, on its own port and data directory, that the test
 * may kill ({@code kill -9}) and start again without touching the shared servers.
 */
public interface OwnServer extends AutoCloseable {

	/** The JDBC URL of its database {@code test}. */
	String url();

	/** The user to connect as, with an empty password. */
	String user();

	/** The column type of a generated {@code BIGINT} key in its SQL. */
	String generatedKey();

	/** Kills the server at once: no shutdown, nothing flushed beyond what committed. */
	void kill() throws Exception;

	/** Starts the killed server again on its data, which it recovers. */
	void restart() throws Exception;

}
