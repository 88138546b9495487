package io.github.dblock.aop;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * Evaluates {@code @DbLock} keys with Spring's expression infrastructure, as
 * {@code @EventListener(condition = ...)} does: each expression is parsed once per method
 * and evaluated in a {@link MethodBasedEvaluationContext} that resolves {@code @bean}
 * references.
 */
final class KeyExpressionEvaluator extends CachedExpressionEvaluator {

	private final Map<ExpressionKey, Expression> expressions = new ConcurrentHashMap<>(64);

	private final BeanFactoryResolver beanResolver;

	KeyExpressionEvaluator(BeanFactory beanFactory) {
		this.beanResolver = new BeanFactoryResolver(beanFactory);
	}

	/**
	 * Parses an expression and caches it for the method.
	 * @throws org.springframework.expression.ParseException if it does not parse
	 */
	void parse(String expression, AnnotatedElementKey methodKey) {
		getExpression(this.expressions, methodKey, expression);
	}

	/**
	 * The variables a parsed expression refers to ({@code #name}) that the method does not
	 * have: not one of its parameter names, nor {@code #p0}/{@code #a0} by position, nor
	 * {@code #root} or {@code #this}. When the method's parameter names are unknown (compiled
	 * without {@code -parameters}), every name that is not positional is unknown.
	 */
	List<String> unknownVariables(String expression, AnnotatedElementKey methodKey, Method method) {
		Expression parsed = getExpression(this.expressions, methodKey, expression);
		if (!(parsed instanceof SpelExpression spel)) {
			return List.of();
		}
		Set<String> known = new HashSet<>(Set.of("root", "this"));
		String[] names = parameterNames(method);
		if (names != null) {
			known.addAll(Arrays.asList(names));
		}
		for (int i = 0; i < method.getParameterCount(); i++) {
			known.add("p" + i);
			known.add("a" + i);
		}
		List<String> unknown = new ArrayList<>();
		collectUnknown(spel.getAST(), known, unknown);
		return unknown;
	}

	/** The method's parameter names, or {@code null} where they were not compiled in. */
	String @Nullable [] parameterNames(Method method) {
		return getParameterNameDiscoverer().getParameterNames(method);
	}

	private static void collectUnknown(SpelNode node, Set<String> known, List<String> unknown) {
		if (node instanceof VariableReference) {
			String name = node.toStringAST().substring(1);
			if (!known.contains(name)) {
				unknown.add(name);
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			collectUnknown(node.getChild(i), known, unknown);
		}
	}

	@Nullable Object evaluate(String expression, AnnotatedElementKey methodKey, KeyExpressionRoot root) {
		Method method = root.getMethod();
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, root.getArgs(),
				getParameterNameDiscoverer());
		context.setBeanResolver(this.beanResolver);
		return getExpression(this.expressions, methodKey, expression).getValue(context);
	}

}
