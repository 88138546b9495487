package io.github.dblock.jdbc.dialect;

import java.sql.SQLException;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.dao.CannotAcquireLockException;
import org.springframework.dao.ConcurrencyFailureException;
import org.springframework.jdbc.core.JdbcOperations;

/**
 * Which errors of a database mean contention on a lock row, over what Spring's
 * {@code SQLErrorCodeSQLExceptionTranslator} already tells: a deadlock, a lock-wait
 * timeout or a serialization failure it maps (its {@code sql-error-codes.xml}) is a
 * {@link ConcurrencyFailureException}, and only the vendor codes it does not map, or maps
 * to another meaning, are listed here, per database.
 *
 * @since 0.1.0
 */
public class SqlErrors {

	private final Set<Integer> contentionCodes;

	/**
	 * Creates the mapping of a database.
	 * @param contentionCodes the vendor codes that mean contention and that Spring does
	 * not translate to a {@link ConcurrencyFailureException}
	 */
	public SqlErrors(Set<Integer> contentionCodes) {
		this.contentionCodes = Set.copyOf(contentionCodes);
	}

	/**
	 * Whether a failure is the database reporting contention on a lock row (deadlock,
	 * lock-wait timeout, serialization failure, a concurrent insert of the same key): an
	 * attempt that did not acquire, to be tried again, never an error for the user.
	 * @param failure the failure, as translated by Spring, with the driver's exception in
	 * its causes
	 * @return whether it is contention
	 */
	public boolean isContention(Throwable failure) {
		if (failure instanceof ConcurrencyFailureException) {
			return true;
		}
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && this.contentionCodes.contains(sql.getErrorCode())) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Whether a failure is a lock-wait timeout, which rolls back the statement alone unless
	 * {@link #rolledBackTransaction} says otherwise.
	 * @param failure the failure, as translated by Spring
	 * @return whether it is one
	 */
	public boolean isLockWaitTimeout(Throwable failure) {
		return failure instanceof CannotAcquireLockException;
	}

	/**
	 * Whether a failure of a statement in the caller's transaction rolled back the whole
	 * transaction, not the statement alone, and why; asked before a lock-wait timeout is
	 * taken for a row not locked.
	 * @param jdbc the caller's transactional connection, which may be asked about its
	 * settings (a new transaction there is harmless: the old one is gone)
	 * @param failure the failure
	 * @return why the transaction was rolled back, or {@code null} if it was not (here
	 * never)
	 */
	public @Nullable String rolledBackTransaction(JdbcOperations jdbc, Throwable failure) {
		return null;
	}

	/**
	 * Whether a failure is the server refusing writes at {@code READ COMMITTED} (a
	 * statement-based binary log), so that maintenance transactions run at the connection's
	 * own isolation.
	 * @param failure the failure
	 * @return whether it is that refusal (here never)
	 */
	public boolean refusesReadCommittedWrites(Throwable failure) {
		return false;
	}

	/**
	 * Whether a failure, or one of its causes, is a driver exception with this vendor code.
	 * @param failure the failure
	 * @param errorCode the vendor's error code
	 * @return whether it has it
	 */
	public static boolean hasErrorCode(Throwable failure, int errorCode) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getErrorCode() == errorCode) {
				return true;
			}
		}
		return false;
	}

}
