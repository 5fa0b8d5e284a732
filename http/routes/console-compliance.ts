import type { App } from './app-type.ts';
import type { Mode } from '../../runtime/types.ts';
import type { FullComplianceRecord } from '../../actors/call/compliance-view.ts';
import { responses, Type } from '../schemas/common.ts';
import { ConsoleModeQuery } from '../schemas/console-calls.ts';
import { FullComplianceRecordSchema } from '../schemas/compliance-conduct.ts';
import { consoleCaller, consoleMode } from '../plugins/console-session.ts';

/** What the route uses: an account's call's full compliance record (actors/call/compliance-view.ts). */
export interface ConsoleComplianceRouteDeps {
  callComplianceRecords: { forAccount(accountId: string, mode: Mode, callId: string): Promise<FullComplianceRecord> };
}

/**
 * The reseller's console reads a call's full compliance record (issue 23 §6): the API's record
 * and how the call went (`conduct`), which the API never returns.
 */
export function registerConsoleComplianceRoutes(app: App, deps: ConsoleComplianceRouteDeps): void {
  app.get(
    '/console/api/calls/:id/compliance_record',
    {
      config: { auth: 'session', permission: 'account:read' },
      schema: {
        hide: true,
        tags: ['console'],
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        querystring: ConsoleModeQuery,
        response: responses({ 200: FullComplianceRecordSchema }, ['call_not_found', 'compliance_record_not_found', 'invalid_parameter'], { auth: 'session' }),
      },
    },
    async (request) => {
      const { accountId } = consoleCaller(request);
      return deps.callComplianceRecords.forAccount(accountId, consoleMode(request, { write: false }), request.params.id);
    },
  );
}
