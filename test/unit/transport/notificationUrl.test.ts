import {
	redactDeliveryKey,
	withDeliveryKey,
} from '../../../nodes/InvoicingAssets/transport/notificationUrl';
import { REDACTED } from '../../../nodes/InvoicingAssets/transport/redaction';
import { expectNoSecret } from '../../harness/secrets';

describe('the delivery key in a notification URL', () => {
	test('the delivery key is added as apiKey and hidden again for output', () => {
		const url = withDeliveryKey('https://n8n.example.com/webhook/x?a=1', 'k&y=');
		expect(new URL(url).searchParams.get('apiKey') === 'k&y=').toBe(true);
		expect(new URL(url).searchParams.get('a')).toBe('1');
		const redacted = redactDeliveryKey(url);
		expectNoSecret(redacted, ['k%26y', 'k&y'], 'the redacted URL');
		expect(new URL(redacted).searchParams.get('apiKey')).toBe(REDACTED);
		expect(redactDeliveryKey('https://n8n.example.com/webhook/x')).toBe(
			'https://n8n.example.com/webhook/x',
		);
		expect(redactDeliveryKey('not a url?apiKey=secret&b=2')).toBe(
			`not a url?apiKey=${REDACTED}&b=2`,
		);
	});
});
