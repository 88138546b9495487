package io.github.dblock.jdbc;

import java.sql.Connection;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.h2.api.Trigger;

/**
 * A test-only H2 trigger on a lock table: a row whose owner (the second column) starts with
 * {@value #MARK} counts {@link #stalled} down, then waits for {@link #gate} (at most a
 * minute). Created {@code BEFORE INSERT}, it holds that attempt between the evaluation of its
 * values and its row's insert; {@code AFTER UPDATE}, after the update of its row, before the
 * update's transaction commits.
 */
public class StallingInsertTrigger implements Trigger {

	/** The start of the owner ids whose inserts stall. */
	static final String MARK = "stalled-";

	/** Counted down when a marked insert reaches the trigger. */
	static volatile CountDownLatch stalled = new CountDownLatch(1);

	/** What a marked insert waits for. */
	static volatile CountDownLatch gate = new CountDownLatch(1);

	/** Arms the trigger for one stalled insert. */
	static void arm() {
		stalled = new CountDownLatch(1);
		gate = new CountDownLatch(1);
	}

	@Override
	public void fire(Connection connection, Object[] oldRow, Object[] newRow) throws java.sql.SQLException {
		if (newRow != null && newRow[1] instanceof String owner && owner.startsWith(MARK)) {
			stalled.countDown();
			try {
				if (!gate.await(1, TimeUnit.MINUTES)) {
					throw new java.sql.SQLException("the test never opened the gate");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new java.sql.SQLException(ex);
			}
		}
	}

}
