package io.github.dblock.sample;

import java.util.List;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The REST API: {@code GET /orders}, {@code GET /orders/{id}} and
 * {@code POST /orders/{id}/pay}.
 */
@RestController
@RequestMapping("/orders")
public class OrderController {

	private final OrderRepository orders;

	private final PaymentService payments;

	/**
	 * Creates the controller.
	 * @param orders the order repository
	 * @param payments the payment service
	 */
	public OrderController(OrderRepository orders, PaymentService payments) {
		this.orders = orders;
		this.payments = payments;
	}

	/**
	 * Lists the orders, by id, at most the first 100.
	 * @return the orders
	 */
	@GetMapping
	public List<Order> orders() {
		return this.orders.findAll(100);
	}

	/**
	 * Returns an order.
	 * @param id the order's id
	 * @return the order
	 */
	@GetMapping("/{id}")
	public Order order(@PathVariable long id) {
		return this.orders.findById(id).orElseThrow(() -> new OrderNotFoundException(id));
	}

	/**
	 * Pays an order, charging it at most once however often it is called.
	 * @param id the order's id
	 * @return the receipt
	 */
	@PostMapping("/{id}/pay")
	public Receipt pay(@PathVariable long id) {
		return this.payments.pay(id);
	}

}
