/**
 * What a local deployment changes because it is local (docs/deploying.md, "The locality rewrites"):
 * fauxqs names every queue in account 000000000000, so the whole deployment uses it and the ARNs
 * the template's policies name agree with the queues'.
 */
export const LOCAL_ACCOUNT = '000000000000';
