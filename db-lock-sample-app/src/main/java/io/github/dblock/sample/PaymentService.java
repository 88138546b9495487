package io.github.dblock.sample;

import java.time.Duration;
import java.util.UUID;

import io.github.dblock.DbLock;
import io.github.dblock.DbLockContext;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Pays orders, each at most once. {@code @DbLock} lets one request per order in at a time,
 * across threads and application instances, and holds the lock until the transaction has
 * committed: a second click waits, then finds the order paid and gets the same receipt. The
 * order is read with {@code SELECT ... FOR UPDATE} and written only with a fencing token
 * larger than the last writer's, the pattern that stays safe when a holder stalls past its
 * lease (see docs/guarantees.md, "What it does not guarantee").
 */
@Service
public class PaymentService {

	/** How long the simulated payment provider takes to charge. */
	private static final Duration PROVIDER_LATENCY = Duration.ofMillis(200);

	private final OrderRepository orders;

	/**
	 * Creates the service.
	 * @param orders the order repository
	 */
	public PaymentService(OrderRepository orders) {
		this.orders = orders;
	}

	/**
	 * Pays an order: charges it once, or returns the receipt of the earlier charge.
	 * @param orderId the order's id
	 * @return the receipt
	 * @throws OrderNotFoundException if there is no such order
	 * @throws io.github.dblock.LockAcquisitionException if another request kept paying the
	 * same order for longer than {@code db-lock.default-wait}
	 */
	@DbLock(key = "#orderId")
	@Transactional
	public Receipt pay(long orderId) {
		// the lock's fencing token: a holder whose lease ended during a stall cannot overwrite a newer one
		long fence = DbLockContext.current().orElseThrow().fencingToken();
		Order order = this.orders.findByIdForUpdate(orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
		String paymentRef = order.paymentRef();
		if (order.status() == OrderStatus.PAID && paymentRef != null) {
			return new Receipt(orderId, order.amount(), paymentRef);
		}
		paymentRef = charge(order);
		if (!this.orders.markPaid(orderId, paymentRef, fence)) {
			throw new IllegalStateException("Order " + orderId + " was written by a newer lock holder: this "
					+ "request's lock ended while it ran; not recording its charge");
		}
		return new Receipt(orderId, order.amount(), paymentRef);
	}

	/** Stands in for a call to a payment provider: slow, and not to be repeated. */
	private static String charge(Order order) {
		try {
			Thread.sleep(PROVIDER_LATENCY.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while charging order " + order.id(), ex);
		}
		return "pay-" + UUID.randomUUID();
	}

}
