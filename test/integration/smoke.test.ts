import { Harness } from '../harness/workflow';

test('runs', async () => {
	const h = new Harness();
	const r = await h.runNode({ parameters: {}, input: [{ json: { a: 1 } }] });
	console.log(JSON.stringify(r.items), r.error);
	expect(r.items[0].json).toEqual({ a: 1 });
});
