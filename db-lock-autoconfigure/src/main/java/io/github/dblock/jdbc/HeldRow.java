package io.github.dblock.jdbc;

/**
 * The row a lease-held lock has in its mode's table, as its holder knows it: what a
 * {@link CommitGuard} checks at the commit of its holder's transaction.
 *
 * @param table the mode's table
 * @param key the stored lock key
 * @param owner the holder's owner id
 * @param token the row's token (a fair ticket's number)
 * @since 0.1.0
 */
public record HeldRow(Table table, String key, String owner, long token) {

	/** The tables whose rows hold a lease. */
	public enum Table {

		/** The lease mode's table, {@code <table>}. */
		LEASE,

		/** The read/write modes' holders, {@code <table>_rw}. */
		READ_WRITE,

		/** The fair mode's queue, {@code <table>_fair_queue}, whose head holds the key. */
		FAIR

	}

}
