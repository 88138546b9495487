package io.github.dblock.sample;

import java.util.List;
import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Repository;

/**
 * Reads and updates orders in the {@code sample_orders} table.
 */
@Repository
public class OrderRepository {

	private final JdbcClient jdbc;

	/**
	 * Creates a repository.
	 * @param jdbc the application's JDBC client
	 */
	public OrderRepository(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	/**
	 * Finds an order.
	 * @param id the order's id
	 * @return the order, or empty if there is none with this id
	 */
	public Optional<Order> findById(long id) {
		return this.jdbc
			.sql("SELECT id, amount, status, charge_count, payment_ref FROM sample_orders WHERE id = ?")
			.param(id)
			.query(Order.class)
			.optional();
	}

	/**
	 * Lists the orders, by id.
	 * @param limit the most orders to list
	 * @return the orders
	 */
	public List<Order> findAll(int limit) {
		return this.jdbc.sql("SELECT id, amount, status, charge_count, payment_ref FROM sample_orders ORDER BY id LIMIT ?")
			.param(limit)
			.query(Order.class)
			.list();
	}

	/**
	 * Finds an order and locks its row until the current transaction ends, so that a lock
	 * holder that lost its lease during a stall and a newer one never both read the row
	 * before either wrote it: the newer one waits for the older one's write and reads it.
	 * @param id the order's id
	 * @return the order, or empty if there is none with this id
	 */
	public Optional<Order> findByIdForUpdate(long id) {
		return this.jdbc
			.sql("SELECT id, amount, status, charge_count, payment_ref FROM sample_orders WHERE id = ? FOR UPDATE")
			.param(id)
			.query(Order.class)
			.optional();
	}

	/**
	 * Records one charge and marks the order paid, unless a lock holder with a larger
	 * fencing token wrote the order already.
	 * @param id the order's id
	 * @param paymentRef the payment provider's reference of the charge
	 * @param fence the fencing token of the lock the caller holds
	 * @return whether the order was written; {@code false} if a newer holder wrote it
	 */
	public boolean markPaid(long id, String paymentRef, long fence) {
		return this.jdbc
			.sql("UPDATE sample_orders SET status = ?, charge_count = charge_count + 1, payment_ref = ?, fence = ? "
					+ "WHERE id = ? AND fence < ?")
			.params(OrderStatus.PAID.name(), paymentRef, fence, id, fence)
			.update() == 1;
	}

}
