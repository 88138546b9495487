package io.github.dblock.jdbc;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * Storage of the read/write modes: one row per holder (reader or writer), each with its own
 * lease and fencing token, and at most one writer's intent per key. Every method runs on its
 * own, outside any transaction of the caller, decides expiry with the database's clock, and
 * reports a deadlock or lock-wait timeout as an attempt that did not acquire.
 * <p>
 * A reader announces itself (inserts its row unless a writer's intent is live), then checks
 * for a live intent or writer, and withdraws if it finds one; a writer announces itself (its
 * intent), then inserts its row only if no live holder row is left. Each side announces
 * before it checks, in statements that commit on their own, so two that overlap cannot both
 * miss each other. Where every insert of a key's holders instead takes a lock of the key
 * before its snapshot and holds it until it commits (PostgreSQL's token-order lock in
 * {@link JdbcReadWriteLockRepository}), each insert sees the rows inserted before it and
 * checks in itself: neither the reader's row nor the writer's intent commits before the check.
 * <p>
 * An attempt refused by another owner's live intent (a reader's, or another writer's) marks
 * that intent as wanted, with the database's now, so that a JVM passing the key among its
 * writers can give it up at the end of a local turn ({@link #cede}); a writer that passes
 * the key to the next writer of its JVM ends its intent but leaves the row, with its mark,
 * for that writer to claim ({@link #handOver}).
 *
 * @since 0.1.0
 */
public interface ReadWriteLockRepository {

	/**
	 * Takes the key for reading, if no writer holds it or waits for it.
	 * @param key the stored lock key
	 * @param owner an id unique to this acquisition
	 * @param lease how long the lease lasts from the database's now
	 * @return the reader's lease, or empty if a writer holds the key or waits for it
	 */
	Optional<Lease> tryRead(String key, String owner, Duration lease);

	/**
	 * Registers (or renews) this writer's intent on the key, then takes the key for writing
	 * if the intent is this writer's and no reader or writer holds it.
	 * @param key the stored lock key
	 * @param owner an id unique to this acquisition, the same for every attempt of it
	 * @param lease how long the lease, and the intent, last from the database's now
	 * @param again whether an earlier attempt of this acquisition registered the intent (a
	 * hint of which statement to try first, where a claim takes two)
	 * @return what came of it
	 */
	WriteAttempt tryWrite(String key, String owner, Duration lease, boolean again);

	/**
	 * Withdraws what an acquisition wrote: a writer's intent, for a writer that gives up, and
	 * a holder row whose insert may have committed although the attempt failed.
	 * @param key the stored lock key
	 * @param owner the acquisition's owner id
	 * @return how many holder rows it deleted (an intent found says nothing of whether the
	 * attempt's holder row may still land)
	 */
	int withdraw(String key, String owner);

	/**
	 * Ends a holder's lease if its owner still holds it with its token; a writer's intent goes
	 * with it.
	 * @param lease the lease
	 * @param writer whether it is a writer's
	 * @return whether it was still held
	 */
	boolean release(Lease lease, boolean writer);

	/**
	 * Ends a writer's lease, if its owner still holds it with its token, and its intent, whose
	 * row is left, ended, with its wanted mark, for the next writer of the key to claim.
	 * @param lease the writer's lease
	 * @return whether it was still held
	 */
	boolean handOver(Lease lease);

	/**
	 * Ends a writer's lease, and its intent, if its owner still holds it with its token and
	 * another owner's attempt marked the intent as wanted less than {@code wantedWithin} ago.
	 * @param lease the writer's lease
	 * @param wantedWithin how recent the other owner's attempt must be
	 * @return whether the lease was ended
	 */
	boolean cede(Lease lease, Duration wantedWithin);

	/**
	 * Extends a holder's lease, if its owner still holds it with its token, to
	 * {@code duration} from the database's now; a writer's intent is extended with it.
	 * @param lease the lease
	 * @param duration the new lease from now
	 * @param writer whether it is a writer's
	 * @return the lease's new end, or empty if it is no longer its owner's
	 */
	Optional<Instant> renew(Lease lease, Duration duration, boolean writer);

	/**
	 * Extends holders' leases, each if its owner still holds it with its token, to
	 * {@code duration} from the database's now, in as few statements as the database allows;
	 * writers' intents are extended with them.
	 * @param leases the leases, with distinct owners
	 * @param duration the new lease from now
	 * @param writers the owner ids among them that are writers'
	 * @return for each lease, in order, its new end, or empty if it is no longer its owner's
	 */
	List<Optional<Instant>> renewAll(List<Lease> leases, Duration duration, Set<String> writers);

	/**
	 * Why the read/write modes cannot be used with this database, asked of it now.
	 * @return the reason, or {@code null} if they can
	 */
	@Nullable String unavailable();

	/**
	 * Deletes holder rows and intents whose lease has ended.
	 * @param limit the most rows to delete of each table
	 * @return the number deleted
	 */
	int deleteExpired(int limit);

	/**
	 * Reads holder rows, readers' and writers', in key order, for monitoring: whoever holds
	 * them, expired or not.
	 * @param limit the most rows to read
	 * @return the rows
	 * @throws UnsupportedOperationException if this repository cannot list its rows
	 */
	default List<HolderRow> holders(int limit) {
		throw new UnsupportedOperationException(getClass().getName() + " cannot list its holder rows");
	}

	/**
	 * A holder row, as {@link #holders(int)} reads it.
	 * @param row the row: key, owner, token, when it was taken and when its lease ends
	 * @param writer whether its holder is a writer (else a reader)
	 */
	record HolderRow(LockRow row, boolean writer) {
	}

	/**
	 * What a writer's attempt found.
	 * @param intent whether the key's intent is this writer's (if not, another writer waits
	 * for the key or holds it)
	 * @param lease the writer's lease if it took the key, else {@code null}
	 */
	record WriteAttempt(boolean intent, @Nullable Lease lease) {
	}

}
