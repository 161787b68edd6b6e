module.exports = { ...require('../jest.base.js'), testMatch: ['<rootDir>/**/*.test.ts'], testTimeout: 60000 };
