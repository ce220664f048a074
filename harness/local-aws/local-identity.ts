/** The region and credentials every client of the local emulators and functions uses: the emulators check none, the SDK wants some. */
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
