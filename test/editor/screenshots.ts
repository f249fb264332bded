/* eslint-disable @n8n/community-nodes/no-restricted-globals, @n8n/community-nodes/no-restricted-imports */
/* eslint-disable @n8n/community-nodes/no-dangerous-functions -- test tooling: installs and runs Chromium, certutil and apt-get */
/**
 * `npm run screenshots`: the nodes in n8n's real editor, in headless Chromium, with checks.
 *
 * Starts the simulator and a real n8n 2.41.1 (the packed package installed, HTTPS with a
 * certificate of the test CA), then drives the editor like a user: signs in, creates a workflow,
 * finds the nodes in the node panel, opens the trigger's panel and its Events, creates the
 * credential in its dialog (n8n tests it against the simulator), adds the action node, opens its
 * Resource and Operation dropdowns for every resource and its invoice list, then adds the Polling
 * Trigger and opens its Events. Every step asserts what the editor shows against the node
 * descriptions, and saves a PNG into docs/images/ (`-- --out <dir>` elsewhere).
 *
 * The browser is Debian's Chromium, installed with apt-get when missing (as root), driven by
 * playwright-core, which never downloads a browser. It trusts the test CA through a throw-away
 * NSS database in its own HOME (certutil, from libnss3-tools), so HTTPS errors are not ignored.
 * When Chromium is missing and cannot be installed (not root, no apt-get, apt-get failing), the
 * script prints "skipped: chromium unavailable (<reason>)" and exits 0; it never reports checks it
 * did not run. A Chromium that is installed but does not start is a failure, not a skip.
 * Ends with `Checks: N passed, M failed`; exits 1 when a check failed. Ctrl-C stops n8n, the
 * simulator and the browser and removes the scratch folder.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import type { ICredentialType, INodeProperties, INodePropertyOptions } from 'n8n-workflow';
import { chromium, selectors, type BrowserContext, type Page } from 'playwright-core';

import { InvoicingAssetsApi } from '../../credentials/InvoicingAssetsApi.credentials';
import { InvoicingAssets } from '../../nodes/InvoicingAssets/InvoicingAssets.node';
import { InvoicingAssetsPollingTrigger } from '../../nodes/InvoicingAssets/InvoicingAssetsPollingTrigger.node';
import { eventTypeOptions } from '../../nodes/InvoicingAssets/shared/events';
import { N8nInstance } from '../n8n/instance';
import { REPOSITORY } from '../n8n/package';
import { handleSignals, onShutdown, runCleanups } from '../n8n/shutdown';
import { startSimulator, type Simulator } from '../simulator';
import { findCertificateAuthority } from '../simulator/tls';
import { aptGet } from '../tools/apt';

const DEBIAN_CHROMIUM = '/usr/bin/chromium';
/** Debian's Chromium, or another Chromium-based browser named in INVOICING_EDITOR_CHROMIUM (not installed by the script). */
const CHROMIUM = process.env.INVOICING_EDITOR_CHROMIUM || DEBIAN_CHROMIUM;
/** The flags of the machine notes: headless, no sandbox (root), and no traffic beyond loopback. */
const CHROMIUM_FLAGS = [
	'--headless',
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
];
const APT_PACKAGES = { chromium: ['chromium', 'fonts-liberation'], certutil: ['libnss3-tools'] };
const VIEWPORT = { width: 1280, height: 800 };
/** Room around the credential dialog in its picture (it is centred in the window). */
const CREDENTIAL_SHOT_MARGIN = 160;
const STEP_TIMEOUT_MS = 60_000;
/** n8n adds this option to the resources and operations of nodes whose credential the HTTP Request node can use. */
const CUSTOM_API_CALL = 'Custom API Call';
/** The name n8n gives the first credential of the type. */
const CREDENTIAL_NAME = 'Invoicing & Assets account';

function say(line: string) {
	process.stdout.write(`${line}\n`);
}

function isExecutable(path: string): boolean {
	try {
		accessSync(path, constants.X_OK);
		return true;
	} catch {
		return false;
	}
}

function commandPath(command: string): string | undefined {
	const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
	return found.status === 0 ? found.stdout.trim() || undefined : undefined;
}

function lastLine(text: string | null | undefined): string {
	return (
		(text ?? '')
			.trim()
			.split('\n')
			.filter((line) => line.trim() !== '')
			.pop() ?? ''
	);
}

/** Installs Chromium and certutil with apt-get when missing; returns why they are unavailable, if so. */
function ensureBrowserTools(): string | undefined {
	const missing = [
		...(isExecutable(CHROMIUM) || CHROMIUM !== DEBIAN_CHROMIUM ? [] : APT_PACKAGES.chromium),
		...(commandPath('certutil') ? [] : APT_PACKAGES.certutil),
	];
	if (!isExecutable(CHROMIUM) && CHROMIUM !== DEBIAN_CHROMIUM) {
		return `INVOICING_EDITOR_CHROMIUM=${CHROMIUM} is not an executable`;
	}
	if (missing.length === 0) return undefined;
	if (process.getuid?.() !== 0)
		return `${missing.join(', ')} not installed, and apt-get needs root`;
	if (!commandPath('apt-get'))
		return `${missing.join(', ')} not installed, and there is no apt-get`;
	say(`installing ${missing.join(' ')} with apt-get (a minute or two)…`);
	const install = () => aptGet(['install', '--no-install-recommends', ...missing]);
	let installed = install();
	if (!installed.ok) {
		aptGet(['update']);
		installed = install();
	}
	if (!installed.ok) return `apt-get install ${missing.join(' ')} failed: ${installed.reason}`;
	if (!isExecutable(CHROMIUM)) return `apt-get installed no ${CHROMIUM}`;
	if (!commandPath('certutil')) return 'apt-get installed no certutil';
	return undefined;
}

/** A HOME whose NSS database trusts the test CA as a TLS issuer, for this Chromium only. */
function trustingHome(work: string, caCertPath: string): string {
	const home = join(work, 'home');
	const nssdb = join(home, '.pki/nssdb');
	mkdirSync(nssdb, { recursive: true });
	const certutil = (args: string[]) => {
		const ran = spawnSync('certutil', ['-d', `sql:${nssdb}`, ...args], { encoding: 'utf8' });
		if (ran.status !== 0) {
			throw new Error(
				`certutil ${args[0]} failed: ${lastLine(ran.stderr) || lastLine(ran.stdout)}`,
			);
		}
	};
	certutil(['-N', '--empty-password']);
	certutil(['-A', '-t', 'C,,', '-n', 'Invoicing & Assets test CA', '-i', caCertPath]);
	return home;
}

interface Check {
	name: string;
	ok: boolean;
	detail: string;
}

class Checks {
	readonly list: Check[] = [];

	readonly images: string[] = [];

	constructor(
		private readonly page: Page,
		private readonly outDir: string,
	) {}

	async run(name: string, body: () => Promise<string>): Promise<boolean> {
		try {
			const detail = await body();
			this.list.push({ name, ok: true, detail });
			say(`✓ ${name}: ${detail}`);
			return true;
		} catch (error) {
			const failure = join(tmpdir(), `invoicing-editor-failure-${this.list.length + 1}.png`);
			await this.page.screenshot({ path: failure }).catch(() => undefined);
			const detail = `${(error as Error).message.split('\n').slice(0, 6).join('\n      ')}\n      (screen at that moment: ${failure})`;
			this.list.push({ name, ok: false, detail });
			say(`✗ ${name}:\n      ${detail}`);
			return false;
		}
	}

	/** Saves the page as `file`, without n8n's toasts; `height` makes the page taller for this shot. */
	async shoot(file: string, height = VIEWPORT.height): Promise<void> {
		const path = join(this.outDir, file);
		const toasts = this.page.locator('.el-notification');
		for (const close of await this.page.locator('.el-notification__closeBtn').all()) {
			await close.click().catch(() => undefined);
		}
		await toasts
			.first()
			.waitFor({ state: 'hidden', timeout: 5_000 })
			.catch(() => undefined);
		if (height !== VIEWPORT.height) {
			await this.page.setViewportSize({ width: VIEWPORT.width, height });
			await this.page.waitForTimeout(300);
		}
		await this.page.screenshot({ path, animations: 'disabled', caret: 'hide' });
		if (height !== VIEWPORT.height) await this.page.setViewportSize(VIEWPORT);
		this.images.push(path);
	}
}

/** The little of the DOM the credential picture needs (the tests compile without the DOM types). */
interface DomBox {
	parentElement: DomBox | null;
	scrollHeight: number;
	clientHeight: number;
	offsetHeight: number;
	style: { maxHeight: string; height: string };
	closest(selector: string): DomBox | null;
}

function expectEqual(what: string, actual: string[], expected: string[]) {
	if (JSON.stringify(actual) !== JSON.stringify(expected)) {
		throw new Error(
			`${what}: expected ${JSON.stringify(expected)}, the editor shows ${JSON.stringify(actual)}`,
		);
	}
}

/** The first line of each visible dropdown option (the name; a description may follow). */
async function visibleOptions(page: Page): Promise<string[]> {
	const options = page.getByRole('option');
	await options.first().waitFor({ state: 'visible' });
	return (await options.allInnerTexts()).map((text) => text.split('\n')[0].trim());
}

async function openDropdown(page: Page, parameter: string): Promise<string[]> {
	await page.getByTestId(`parameter-input-${parameter}`).click();
	return await visibleOptions(page);
}

/** Escape closes an open dropdown (a second one would close the node's panel). */
async function closeDropdown(page: Page) {
	await page.keyboard.press('Escape');
	await page.getByRole('option').first().waitFor({ state: 'hidden' });
}

async function choose(page: Page, parameter: string, optionName: string) {
	const names = await openDropdown(page, parameter);
	const index = names.indexOf(optionName);
	if (index < 0)
		throw new Error(`${parameter} has no option "${optionName}" (it shows ${names.join(', ')})`);
	await page.getByRole('option').nth(index).click();
	await page
		.getByRole('option')
		.first()
		.waitFor({ state: 'hidden' })
		.catch(() => undefined);
}

/** Opens the node panel from `opener`, searches "Invoicing" and opens the package's entry. */
async function openPackageInNodePanel(page: Page, opener: string) {
	await page.getByTestId(opener).first().click();
	await page.getByTestId('node-creator-search-bar').fill('Invoicing');
	await page
		.getByTestId('node-creator-item-name')
		.filter({ hasText: /^Invoicing & Assets$/ })
		.first()
		.click();
}

function operationOptions(resource: string): INodePropertyOptions[] {
	const property = new InvoicingAssets().description.properties.find(
		(candidate: INodeProperties) =>
			candidate.name === 'operation' &&
			candidate.displayOptions?.show?.resource?.includes(resource),
	);
	return (property?.options ?? []) as INodePropertyOptions[];
}

async function driveEditor(
	checks: Checks,
	page: Page,
	n8n: N8nInstance,
	sim: Simulator,
): Promise<void> {
	const action = new InvoicingAssets().description;
	const resources = (action.properties.find((property) => property.name === 'resource')?.options ??
		[]) as INodePropertyOptions[];
	const credential: ICredentialType = new InvoicingAssetsApi();
	const fieldLabels = credential.properties
		.filter((property) => property.type !== 'hidden')
		.map((property) => property.displayName);
	expectEqual(
		"the issue's resources",
		resources.map((option) => option.name),
		['Invoice', 'Managed Asset', 'Subscription'],
	);
	expectEqual("the issue's credential fields", fieldLabels, [
		'Environment',
		'Base URL',
		'Identity Service URL',
		'Scope',
		'Client ID',
		'Client Secret',
		'API Key Expires On',
	]);

	const ok = await checks.run(
		'the editor is served over HTTPS, trusted through the test CA',
		async () => {
			const response = await page.goto(`${n8n.url}/signin`);
			if (!response?.ok()) throw new Error(`GET /signin answered ${response?.status()}`);
			const security = await response.securityDetails();
			return `${security?.protocol ?? 'TLS'} certificate of "${security?.issuer ?? '?'}", no certificate error ignored`;
		},
	);
	if (!ok) return;

	if (
		!(await checks.run('sign in', async () => {
			await page.getByLabel('Email').fill(n8n.owner.email);
			await page.getByLabel('Password').fill(n8n.owner.password);
			await page.getByRole('button', { name: 'Sign in' }).click();
			await page.waitForURL((url) => !url.pathname.includes('signin'));
			return `signed in as ${n8n.owner.email}`;
		}))
	) {
		return;
	}

	const triggerEntries = eventTypeOptions.map((option) => `On ${option.name.toLowerCase()}`);
	if (
		!(await checks.run('node panel: the trigger events and the actions', async () => {
			await page.goto(`${n8n.url}/workflow/new`);
			await openPackageInNodePanel(page, 'canvas-add-button');
			await page.getByTestId('node-creator-category-item').filter({ hasText: 'Actions' }).click();
			const expected = [
				...triggerEntries,
				...resources.flatMap((resource) => [
					`${resource.name} actions`,
					...operationOptions(String(resource.value)).map((operation) => String(operation.action)),
				]),
			];
			const items = page.getByTestId('item-iterator-item');
			await items.nth(expected.length - 1).waitFor();
			const shown = (await items.allTextContents()).map((text) => text.trim());
			expectEqual(
				'node panel entries',
				shown.map((text) => text.toLowerCase()),
				expected.map((text) => text.toLowerCase()),
			);
			await checks.shoot('node-panel.png', 1140);
			return `${triggerEntries.length} trigger events, ${expected.length - triggerEntries.length - resources.length} actions in ${resources.length} groups`;
		}))
	) {
		return;
	}

	if (
		!(await checks.run('trigger panel: the HTTPS notice and the Events', async () => {
			await page.getByTestId('item-iterator-item').filter({ hasText: triggerEntries[0] }).click();
			const parameters = page.getByTestId('node-parameters');
			await parameters.waitFor();
			const text = await parameters.innerText();
			for (const needle of ['TLS 1.2', 'N8N_WEBHOOK_URL', 'https://']) {
				if (!text.includes(needle)) throw new Error(`the trigger panel does not mention ${needle}`);
			}
			const events = await openDropdown(page, 'events');
			expectEqual(
				'Events',
				events,
				eventTypeOptions.map((option) => option.name),
			);
			await checks.shoot('trigger-events.png');
			await closeDropdown(page);
			// The webhook URL the trigger will register is n8n's https address.
			await page.getByText('Webhook URLs').first().click();
			const webhookUrl = `${n8n.url}/webhook`;
			await page.getByText(webhookUrl).first().waitFor();
			return `${events.join(', ')}; webhook URL ${webhookUrl}…`;
		}))
	) {
		return;
	}

	if (
		!(await checks.run(
			"credential dialog: the fields, and n8n's connection test against the simulator",
			async () => {
				const tokensBefore = sim.log.tokensIssued();
				const empty = page.getByTestId('node-credentials-empty-state');
				if (await empty.isVisible()) {
					await empty.click();
				} else {
					await page.getByTestId('node-credentials-select').click();
					await page.getByText('Create new credential').click();
				}
				const modal = page.getByTestId('editCredential-modal');
				await modal.waitFor();
				const labels = (
					await modal.getByTestId('credential-connection-parameter').allInnerTexts()
				).map((text) =>
					text
						.split('\n')[0]
						.replace(/\s*\*$/, '')
						.trim(),
				);
				// n8n adds "Allowed HTTP Request Domains" to credentials that have `authenticate`.
				expectEqual(
					'credential fields',
					labels.filter((label) => label !== 'Allowed HTTP Request Domains'),
					fieldLabels,
				);
				const client = sim.defaultClient;
				const fill = async (field: string, value: string) =>
					await modal.getByTestId(`parameter-input-${field}`).locator('input').fill(value);
				await fill('baseUrl', sim.serviceUrl);
				await fill('identityUrl', sim.identityUrl);
				await fill('scope', client.scope);
				await fill('clientId', client.clientId);
				await fill('clientSecret', client.clientSecret);
				const secretType = await modal
					.getByTestId('parameter-input-clientSecret')
					.locator('input')
					.getAttribute('type');
				if (secretType !== 'password')
					throw new Error(`the Client Secret input is type=${secretType}`);
				await modal.getByTestId('credential-save-button').click();
				// n8n tests a new credential on saving and, created from a node, closes the dialog when
				// the test passes (a failed test keeps it open with the error). Opened again for
				// editing, the dialog tests the saved credential and shows the outcome.
				await modal.waitFor({ state: 'hidden', timeout: STEP_TIMEOUT_MS });
				await page.getByTestId('credential-edit-button').click();
				await modal
					.getByText('Connection tested successfully')
					.waitFor({ timeout: STEP_TIMEOUT_MS });
				if ((await page.locator('body').innerText()).includes(client.clientSecret)) {
					throw new Error('the client secret is visible on the page');
				}
				const tokens = sim.log.tokensIssued() - tokensBefore;
				const listed = sim.log.count('subscriptions.list', {
					clientId: client.clientId,
					status: 200,
				});
				if (tokens < 1 || listed < 1) {
					throw new Error(
						`the simulator saw ${tokens} token requests and ${listed} subscription lists`,
					);
				}
				// One picture of every field, down to API Key Expires On. n8n draws this dialog at most
				// 750 px tall and scrolls the rest; for the picture only, that cap is lifted on the
				// dialog (an inline style: the fields are n8n's own rendering) and the window made tall
				// enough. Then the bottom of each field must be what the window shows at that point.
				const dialogHeight = await modal
					.getByTestId('credential-connection-parameter')
					.last()
					.evaluate((field) => {
						const element = field as unknown as DomBox;
						let scroller = element.parentElement;
						while (scroller && scroller.scrollHeight <= scroller.clientHeight + 1) {
							scroller = scroller.parentElement;
						}
						const dialog = element.closest('.el-dialog');
						if (!dialog) return 0;
						const hiddenBelow = scroller ? scroller.scrollHeight - scroller.clientHeight : 0;
						const height = dialog.offsetHeight + hiddenBelow + 8;
						dialog.style.maxHeight = 'none';
						dialog.style.height = `${height}px`;
						return height;
					});
				const shotHeight = Math.max(VIEWPORT.height, dialogHeight + CREDENTIAL_SHOT_MARGIN);
				await page.setViewportSize({ width: VIEWPORT.width, height: shotHeight });
				await page.waitForTimeout(300);
				const hidden = await modal
					.getByTestId('credential-connection-parameter')
					.evaluateAll((elements) =>
						elements.flatMap((element, index) => {
							const rect = element.getBoundingClientRect();
							const hit = element.ownerDocument.elementFromPoint(
								rect.left + rect.width / 2,
								rect.bottom - 2,
							);
							return hit && element.contains(hit) ? [] : [index];
						}),
					);
				if (hidden.length > 0) {
					throw new Error(
						`at ${shotHeight} px the screenshot would not show: ${hidden.map((index) => labels[index]).join(', ')}`,
					);
				}
				await checks.shoot('credential.png', shotHeight);
				await page.keyboard.press('Escape');
				await modal.waitFor({ state: 'hidden' });
				return `${labels.join(', ')}; "Connection tested successfully" after a token request and a subscription list at the simulator`;
			},
		))
	) {
		return;
	}

	if (
		!(await checks.run("action node: the resources, and each resource's operations", async () => {
			// Escape closed the credential dialog, and may have closed the trigger's panel with it.
			const closePanel = page.getByTestId('ndv-close-button');
			if (await closePanel.isVisible()) await closePanel.click();
			const invoiceGet = operationOptions('invoice').find((operation) => operation.value === 'get');
			await openPackageInNodePanel(page, 'canvas-handle-plus');
			await page
				.getByTestId('item-iterator-item')
				.filter({ hasText: String(invoiceGet?.action) })
				.click();
			await page.getByTestId('parameter-input-resource').waitFor();
			// The only credential of the type is preselected for the new node.
			const selected = await page
				.getByTestId('node-credentials-select')
				.evaluate((element) =>
					[
						element.textContent ?? '',
						...[...element.querySelectorAll('input')].map((input) => input.value),
					]
						.join(' ')
						.trim(),
				);
			if (!selected.includes(CREDENTIAL_NAME)) {
				throw new Error(`the new node's credential is "${selected}", not "${CREDENTIAL_NAME}"`);
			}
			const shownResources = await openDropdown(page, 'resource');
			expectEqual('Resource', shownResources, [
				...resources.map((option) => option.name),
				CUSTOM_API_CALL,
			]);
			await checks.shoot('action-resources.png');
			await closeDropdown(page);
			const summary: string[] = [];
			for (const resource of resources) {
				await choose(page, 'resource', resource.name);
				const operations = await openDropdown(page, 'operation');
				expectEqual(`${resource.name} operations`, operations, [
					...operationOptions(String(resource.value)).map((option) => option.name),
					CUSTOM_API_CALL,
				]);
				if (resource.value === 'invoice') await checks.shoot('action-operations.png');
				await closeDropdown(page);
				summary.push(
					`${resource.name}: ${operations.filter((name) => name !== CUSTOM_API_CALL).join(', ')}`,
				);
			}
			return `${summary.join('; ')} (plus n8n's ${CUSTOM_API_CALL}); credential "${CREDENTIAL_NAME}" preselected`;
		}))
	) {
		return;
	}

	await checks.run("invoice list search shows the simulator's invoices", async () => {
		await choose(page, 'resource', 'Invoice');
		await choose(page, 'operation', 'Get');
		await page.getByTestId('rlc-input').click();
		const items = page.getByTestId('rlc-item');
		await items.first().waitFor({ timeout: STEP_TIMEOUT_MS });
		const shown = (await items.allInnerTexts()).map((text) => text.split('·')[0].trim());
		const known = new Set(sim.data.invoices().map((invoice) => invoice.invoiceNumber));
		const unknown = shown.filter((number) => !known.has(number));
		if (unknown.length > 0) throw new Error(`not invoices of the simulator: ${unknown.join(', ')}`);
		await checks.shoot('invoice-list.png');
		return `${shown.length} invoices listed (${shown[0]} …), all from the simulator`;
	});

	await checks.run(
		'polling trigger: in the node panel, its notice, Poll Times and Events',
		async () => {
			const polling = new InvoicingAssetsPollingTrigger().description;
			const events = polling.properties.find((property) => property.name === 'events');
			const expectedEvents = ((events?.options ?? []) as INodePropertyOptions[]).map(
				(option) => option.name,
			);
			// A new workflow; the editor may ask whether to leave the one with unsaved nodes.
			page.once('dialog', async (dialog) => await dialog.accept());
			await page.goto(`${n8n.url}/workflow/new`);
			await page.getByTestId('canvas-add-button').first().click();
			await page.getByTestId('node-creator-search-bar').fill('Invoicing');
			// The panel of triggers names a trigger without its " Trigger" suffix.
			const listedName = polling.displayName.replace(/ Trigger$/, '');
			const entry = page
				.getByTestId('node-creator-item-name')
				.filter({ hasText: listedName })
				.first();
			await entry.waitFor();
			const listed = (await page.getByTestId('node-creator-item-name').allInnerTexts()).map(
				(text) => text.trim(),
			);
			await entry.click();
			// The node's own page of the panel: one entry per event it can start on.
			const triggerEntries = expectedEvents.map((name) => `On ${name.toLowerCase()}`);
			// The search results stay in the page behind it; the node's entries are those that say "On …".
			const items = page.getByTestId('item-iterator-item').filter({ hasText: /^\s*On / });
			await items.nth(triggerEntries.length - 1).waitFor();
			const entries = (await items.allTextContents()).map((text) => text.trim());
			expectEqual(
				'Polling Trigger entries',
				entries.map((text) => text.toLowerCase()),
				triggerEntries.map((text) => text.toLowerCase()),
			);
			await checks.shoot('polling-trigger-events.png');
			await items.filter({ hasText: triggerEntries[1] }).first().click();
			const parameters = page.getByTestId('node-parameters');
			await parameters.waitFor();
			const text = await parameters.innerText();
			const notice = polling.properties.find((property) => property.type === 'notice');
			const noticeStart = String(notice?.displayName).slice(0, 80);
			for (const needle of ['Poll Times', noticeStart, 'what polling can see']) {
				if (!text.includes(needle))
					throw new Error(`the polling trigger's panel does not show "${needle}"`);
			}
			await checks.shoot('polling-trigger-parameters.png');
			const shown = await openDropdown(page, 'events');
			expectEqual('Polling Trigger Events', shown, expectedEvents);
			await closeDropdown(page);
			return `"${listedName}" among ${listed.join(', ')}, its entries ${entries.join(', ')}; its panel shows Poll Times, the notice and Events ${shown.join(', ')}`;
		},
	);
}

async function main() {
	const { values } = parseArgs({
		options: { out: { type: 'string', default: join(REPOSITORY, 'docs/images') } },
	});
	const outDir = resolve(values.out ?? '');
	const started = Date.now();

	handleSignals();
	const unavailable = ensureBrowserTools();
	if (unavailable) {
		say(`skipped: chromium unavailable (${unavailable})`);
		return;
	}
	const caDir = process.env.INVOICING_SIM_CA_DIR ?? '';
	const ca = findCertificateAuthority(caDir);
	if (!ca)
		throw new Error('no test CA: run under test/tools/with-test-ca.ts (npm run screenshots does)');
	const version = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8', timeout: 60_000 });

	const work = mkdtempSync(join(tmpdir(), 'invoicing-editor-'));
	let context: BrowserContext | undefined;
	let sim: Simulator | undefined;
	let n8n: N8nInstance | undefined;
	// Newest first on Ctrl-C: the browser, then n8n (registered by itself) and the simulator, then the folder.
	onShutdown(() => rmSync(work, { recursive: true, force: true }));
	onShutdown(async () => await sim?.close());
	onShutdown(async () => await context?.close().catch(() => undefined));
	try {
		const home = trustingHome(work, ca.certPath);
		selectors.setTestIdAttribute('data-test-id');
		try {
			context = await chromium.launchPersistentContext(join(work, 'profile'), {
				executablePath: CHROMIUM,
				headless: true,
				args: CHROMIUM_FLAGS,
				env: { ...process.env, HOME: home },
				ignoreHTTPSErrors: false,
				viewport: VIEWPORT,
				deviceScaleFactor: 1,
				locale: 'en-US',
				timezoneId: 'UTC',
				colorScheme: 'light',
				reducedMotion: 'reduce',
				timeout: STEP_TIMEOUT_MS,
			});
		} catch (error) {
			// Installed but not starting is a broken browser, not a missing one: a failure.
			say(
				`Chromium ${CHROMIUM} is installed but does not start: ${lastLine((error as Error).message.split('\n')[0])}`,
			);
			say('Checks: 0 passed, 1 failed, 1 total');
			process.exitCode = 1;
			return;
		}
		say(`browser: ${version.stdout.trim() || CHROMIUM}, headless, trusting the test CA`);
		context.setDefaultTimeout(STEP_TIMEOUT_MS);
		const page = context.pages()[0] ?? (await context.newPage());

		say('starting the simulator and n8n…');
		sim = await startSimulator({ caDir, invoices: 40, assets: 20 });
		n8n = new N8nInstance({ name: 'editor', caDir });
		await n8n.start();
		mkdirSync(outDir, { recursive: true });

		const checks = new Checks(page, outDir);
		await driveEditor(checks, page, n8n, sim);

		const failed = checks.list.filter((check) => !check.ok).length;
		say('');
		for (const image of checks.images) {
			say(
				`screenshot ${relative(process.cwd(), image)} (${(statSync(image).size / 1024).toFixed(0)} kB)`,
			);
		}
		say(`editor checks took ${((Date.now() - started) / 1000).toFixed(0)} s`);
		say(
			`Checks: ${checks.list.length - failed} passed, ${failed} failed, ${checks.list.length} total`,
		);
		process.exitCode = failed === 0 && checks.list.length > 0 ? 0 : 1;
	} finally {
		await context?.close().catch(() => undefined);
		await n8n?.dispose();
		await runCleanups();
	}
}

main().catch(async (error: Error) => {
	say(`editor checks failed to run: ${error.stack ?? error.message}`);
	say('Checks: 0 passed, 1 failed, 1 total');
	await runCleanups();
	process.exitCode = 1;
});
